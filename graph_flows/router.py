"""Which path a question takes, decided per question and written to the trace.

- **pointed** (today's path): plan -> retrieve -> reflect loop -> answer. A fact, a name, a date, a comparison,
  a chain of hops: the answer sits in a few passages.
- **broad**: themes -> entities -> passages, reflect on which themes are covered, a grouped answer. "What
  problems do customers report with X?", "summarise the open issues with Y", "what is going on at Z?": the
  answer is spread over many documents that need not link to each other. A question for one thing (what blocks
  a given release) is pointed even when its answer may be a list: the passages that say so answer it, never a
  theme's overview.

A reasoner that states the scope (the LLM plan's `scope`) decides; otherwise the question's shape does: a
request for a summary, or for a collection (problems, issues, changes, blockers...) rather than one value.
The rule is pure, so a table test pins it; no corpus names or question templates take part.
"""

from __future__ import annotations

import re
from typing import Any, Literal

Route = Literal["broad", "pointed"]

_COLLECTIVE = (
    r"(?:problems?|issues|bugs|complaints|incidents|outages|risks|blockers|changes|requests|options|rules|"
    r"topics|concerns|challenges|failures|errors|defects|themes|things|work|policies|processes)"
)
_BROAD_SHAPES = [
    re.compile(r"\b(?:summari[sz]e|summary of|overview|recap|round-?up|run-?down)\b", re.IGNORECASE),
    re.compile(
        rf"\b(?:what|which)\s+(?:(?:are|were|is|have|has|been|all|the|our|any|kinds? of|sorts? of)\s+)*"
        rf"(?:[\w-]*[^\Ws]\s+){{0,4}}?{_COLLECTIVE}\b",  # modifiers; a word in -s ends the phrase earlier
        re.IGNORECASE,
    ),
    re.compile(
        r"\bwhat(?:'s|\s+is|\s+are)\s+(?:still\s+)?(?:going on|happening|in flight|under way|in progress)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\bwhat\s+(?:has\s+|have\s+)?changed\b", re.IGNORECASE),
    re.compile(r"\bwhat\s+do\s+we\s+(?:have|know)\s+(?:on|about)\b", re.IGNORECASE),
    re.compile(
        r"\bwhat\s+(?:has|have|did)\s+(?:[\w-]+\s+){1,4}?(?:asked|requested|reported|raised|complained)\b",
        re.IGNORECASE,
    ),
    re.compile(rf"\ball\s+(?:the\s+|of\s+the\s+)?(?:[\w-]+\s+){{0,3}}?{_COLLECTIVE}\b", re.IGNORECASE),
]
_SCALAR_ANSWERS = {"person", "date", "number", "money", "place", "yesno", "choice"}


def choose_route(question: str, plan: dict[str, Any], *, themes_available: bool) -> tuple[Route, str]:
    """(route, why). Broad only when there are themes to read and the question asks for a collection."""
    if not themes_available:
        return "pointed", "no themes"
    scope = plan.get("scope") or ""
    if scope in ("broad", "pointed"):
        return scope, "reasoner"  # type: ignore[return-value]
    if plan.get("followup_of") is not None:
        return "pointed", "follow-up"
    if plan.get("comparison"):
        return "pointed", "comparison"
    if plan.get("answer_type") in _SCALAR_ANSWERS:
        return "pointed", f"answer type {plan.get('answer_type')}"
    for shape in _BROAD_SHAPES:
        found = shape.search(question)
        if found:
            return "broad", f"shape: {found.group(0).lower()}"
    return "pointed", "shape"
