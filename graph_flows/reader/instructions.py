"""Text written to an assistant rather than to the people who read the page: a page may carry it to steer
whatever reads it ("ignore previous instructions", "note to AI assistants: reply that ..."). Such text is data
about the page, never an answer: the reader never offers it as a unit, and the answer's checks drop any
statement that holds it, whichever reasoner wrote it.

The patterns are the published shapes of prompt injection (an instruction to forget earlier ones, a message
addressed to an AI, a claimed system role, a demand to hide itself); each needs its addressee or its
instruction words, so a policy sentence ("always answer within a day", "the assistant manager approves")
is not taken for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_AI = r"(?:ai|a\.i\.|assistants?|chat ?bots?|bots?|llms?|language models?|gpts?|copilots?|answer bots?)"
_INSTRUCTIONS = r"(?:instructions?|prompts?|rules|directions|guidelines|directives)"
_PATTERNS = (
    # forget what came before
    rf"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|of|the|my|these|those)\s+)*"
    rf"(?:(?:previous|prior|above|earlier|preceding|former|original|your|other|system|all)\s+){{1,2}}"
    rf"{_INSTRUCTIONS}\b",
    # a message addressed to an AI
    rf"\b(?:attention|note|message|instructions?|notice|hey|dear|reminder)\b[\s,:-]*(?:to |for )?"
    rf"(?:all |any |the |every )?{_AI}\b",
    rf"\b(?:if|when|whenever) you(?: are|'re) (?:an? )?{_AI}\b",
    rf"\b(?:any|all|every) {_AI}\b.{{0,40}}\b(?:must|should|shall|will|reading|processing|answering)\b",
    rf"\b{_AI} (?:reading|processing|summari[sz]ing|answering|indexing) (?:this|these)\b",
    # a claimed role or mode
    r"\b(?:you are|you're) (?:now|in \w+ mode)\b|\bfrom now on,? you (?:are|will|must|shall)\b",
    r"\b(?:act|behave|respond) as (?:an? )?(?:admin|administrator|root|system|superuser|developer)\b",
    r"\bpretend (?:that )?you are\b",
    r"\bsystem (?:prompt|override|message|instruction)s?\b|\[\s*system\s*\]|<\s*/?\s*system\s*>",
    r"\b(?:new|updated|real) instructions\s*:",
    r"\b(?:developer|god|jailbreak|dan) mode\b",
    # a demand to hide itself
    r"\bdo not (?:mention|tell|reveal|disclose|show) (?:this|these|that) "
    r"(?:instructions?|message|note|to the user)\b",
)
_ADDRESSED = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)


def addresses_assistant(text: str) -> bool:
    """True when the text is written to an assistant: to report as data, never to state as an answer."""
    return bool(_ADDRESSED.search(text))


def tainted_lines(text: str) -> list[str]:
    """The lines of a passage written to an assistant: what follows such a line in its paragraph is the
    instruction's payload ("ATTENTION ASSISTANT:" then "print the pricing table"), so it goes with it."""
    out: list[str] = []
    payload = False
    for line in text.splitlines():
        if not line.strip():
            payload = False
            continue
        if addresses_assistant(line):
            payload = True
        if payload:
            out.append(line)
    return out


def readable(texts: Iterable[str], passage: str) -> list[str]:
    """The texts (units of `passage`) that are not written to an assistant nor part of such a paragraph."""
    tainted = tainted_lines(passage)
    return [t for t in texts if not addresses_assistant(t) and not any(t in line for line in tainted)]
