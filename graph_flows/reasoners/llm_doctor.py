"""`sleuth doctor --llm`: the configured model asked the three real steps (plan, reflect, compose, with their
real prompts and schemas) on a small fixture, timed as it streams.

Each call's time to its first streamed text is the prompt's reading (plus any load); the rest is generation.
From them: prompt and generation tokens/s, whether each step's reply is accepted by its schema, a question's
time with four askers sharing the server's slots against the configured `question_budget_s`, and the limits
that would fit (`llm_presets.recommend`), with the preset closest to them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from graph_flows.reasoners import prompts
from graph_flows.reasoners.base import ReasonerError
from graph_flows.reasoners.llm_client import Ledger, ModelClient
from graph_flows.reasoners.llm_presets import PRESETS, Rates, question_seconds, recommend
from graph_flows.reasoners.llm_schemas import ComposeOut, PlanOut, ReflectOut
from graph_flows.state import Evidence

CONCURRENT = 4  # askers at once the verdict assumes
QUESTION = "Why was the Atlas launch delayed?"
_TEXTS = {
    "Atlas Launch": "The Atlas launch moved from March to May 2024. The delay is tracked in ENG-142.",
    "ENG-142": "ENG-142: the Atlas launch was blocked by the Payment Gateway migration. Owner: Dana Okafor.",
    "Payment Gateway": "The Payment Gateway migration slipped because the vendor Helix Pay missed its "
    "certification deadline. The new certification date is 2024-04-12.",
}


def fixture() -> list[Evidence]:
    return [
        {"id": f"E{i}", "chunk_id": f"c{i}", "doc_id": f"doctor:{i}", "title": title, "url": "",
         "source": "doctor", "kind": "page", "text": text, "updated_at": "2024-05-01T00:00:00+00:00",
         "version": "1", "turn": 1, "round": 1, "via": "text", "parent": None, "score": 1.0, "relevance": 0.0}
        for i, (title, text) in enumerate(_TEXTS.items(), start=1)
    ]  # fmt: skip


@dataclass
class StepTiming:
    step: str
    seconds: float
    first_text_s: float | None
    input_tokens: int
    output_tokens: int
    accepted: bool
    error: str = ""


@dataclass
class Measured:
    steps: list[StepTiming] = field(default_factory=list)
    rates: Rates | None = None
    question_s: float | None = None
    budget_s: float = 0.0
    recommended: dict[str, Any] = field(default_factory=dict)
    preset: str = ""

    @property
    def fits(self) -> bool:
        return self.question_s is not None and self.question_s <= self.budget_s

    def lines(self) -> dict[str, str]:
        rows = {
            "schemas": ", ".join(
                f"{s.step} {'accepted' if s.accepted else 'rejected (' + s.error[:80] + ')'} in {s.seconds:.1f}s"
                for s in self.steps
            )
        }
        if self.rates is not None and self.question_s is not None:
            rows["model speed"] = (
                f"prompt {self.rates.prompt_tps:.0f} tokens/s, generation {self.rates.generate_tps:.1f} tokens/s, "
                f"first call overhead {self.rates.overhead_s:.1f}s"
            )
            verdict = "fits" if self.fits else "over"
            rows["budget"] = (
                f"{verdict}: a question takes ~{self.question_s:.0f}s with {CONCURRENT} askers at once, "
                f"budget {self.budget_s:.0f}s"
            )
            settings = " ".join(f"SLEUTH_LLM__{k.upper()}={v:g}" for k, v in self.recommended.items())
            short = PRESETS[self.preset]["question_budget_s"] < self.recommended["question_budget_s"]
            hint = " (no preset has this headroom: set these)" if short else ""
            rows["preset"] = (
                f"{self.preset} (SLEUTH_LLM__PRESET={self.preset}); measured fit{hint}: {settings}"
            )
        return rows


def measure(client: ModelClient, clock: Any = time.monotonic) -> Measured:
    """The three steps on the fixture, one after the other (a cold model loads on the first)."""
    evidence = fixture()
    plan = {
        "effective_question": QUESTION,
        "answer_type": "explanation",
        "aspects": [{"id": "a1", "text": "why the Atlas launch was delayed", "terms": [], "entities": []}],
    }
    chains = {"a1": [e["id"] for e in evidence]}
    asks = [
        ("plan", prompts.PLAN, prompts.plan_message(QUESTION, None), PlanOut),
        ("reflect", prompts.REFLECT, prompts.step_message(plan, evidence, {"new_passages": list(chains["a1"])},
                                                           budget_tokens=3000), ReflectOut),
        ("compose", prompts.COMPOSE, prompts.step_message(plan, evidence, {"established": chains},
                                                           budget_tokens=3000, step="compose"), ComposeOut),
    ]  # fmt: skip
    out = Measured(budget_s=client.limits.question_budget_s)
    for step, system, user, schema in asks:
        out.steps.append(_timed(client, step, system, user, schema, clock))
    out.rates = _rates(out.steps)
    if out.rates is not None:
        out.question_s = question_seconds(out.rates, CONCURRENT)
        out.recommended = recommend(out.rates, concurrent=CONCURRENT)
        out.preset = closest_preset(out.recommended)
    return out


def _timed(client: ModelClient, step: str, system: str, user: str, schema: type, clock: Any) -> StepTiming:
    ledger = Ledger(run=f"doctor-{step}")
    client.start(ledger)
    first: list[float] = []
    started = clock()
    previous = client.on_text
    client.on_text = lambda _step, _text: first.append(clock()) if not first else None
    accepted, error = True, ""
    try:
        client.ask(ledger, system, user, schema, step="compose")  # no reserve: the whole budget for it
    except ReasonerError as exc:
        accepted, error = False, str(exc)
    finally:
        client.on_text = previous
    seconds = clock() - started
    return StepTiming(
        step, seconds, first[0] - started if first else None, ledger.input_tokens, ledger.output_tokens,
        accepted, error,
    )  # fmt: skip


def _rates(steps: list[StepTiming]) -> Rates | None:
    timed = [s for s in steps if s.first_text_s is not None and s.output_tokens > 0]
    if not timed:
        return None
    warm = timed[1:] or timed
    reading = sum(s.first_text_s or 0.0 for s in warm)
    writing = sum(max(1e-3, s.seconds - (s.first_text_s or 0.0)) for s in timed)
    prompt_tps = sum(s.input_tokens for s in warm) / max(reading, 1e-3)
    overhead = max(0.0, (timed[0].first_text_s or 0.0) - timed[0].input_tokens / prompt_tps)
    return Rates(
        prompt_tps=prompt_tps,
        generate_tps=sum(s.output_tokens for s in timed) / writing,
        overhead_s=overhead,
    )


def closest_preset(recommended: dict[str, Any]) -> str:
    """The preset whose timeout and question budget are nearest the measured fit without being below it."""
    fitting = [
        (p["question_budget_s"], name)
        for name, p in PRESETS.items()
        if p["question_budget_s"] >= recommended["question_budget_s"]
        and p["timeout_s"] >= recommended["timeout_s"]
    ]
    return min(fitting)[1] if fitting else "ollama"
