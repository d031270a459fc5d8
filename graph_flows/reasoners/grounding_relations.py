"""Whether a sentence relates what it states as its support does: values bound to the same words, the same
cause, the same direction. Pure; `grounding.ungrounded` asks it once the quote, the values and the negations
agree, since each of these keeps every word and number of its support and still says something else:

- **swapped values**: "Starter allows 600 and Pro 120" from "Starter allows 120 and Pro 600". Each value is
  read with the words before it (back to the previous value); where the support binds those words, and only
  them, to another value the sentence also states, the values were swapped.
- **a changed cause**: "moved because the vendor missed its deadline" from "moved because of ENG-142". When
  the sentence gives a cause ("because", "due to", "caused by", ...; "led to" and "resulted in" the other way
  round) and its support gives one, the sentence's cause must be mostly the support's; a cause the support
  does not state at all is not in it either.
- **a reversed direction**: "rose" for "fell", "above" for "below", "before" for "after": a sentence using one
  side of a pair where its support uses only the other side.
"""

from __future__ import annotations

import re
from collections import Counter

from graph_flows.reading import term_set

CAUSE_SHARE = 0.5  # share of the sentence's cause terms that the support's cause must hold
_BACKWARD = (
    r"because(?:\s+of)?|due\s+to|caused\s+by|owing\s+to|as\s+a\s+result\s+of|thanks\s+to|blocked\s+by|"
)
_BACKWARD += r"on\s+account\s+of"
_FORWARD = r"led\s+to|leads\s+to|resulted\s+in|results\s+in|caused|causes|causing"
_CAUSE = re.compile(rf"\b(?:(?P<back>{_BACKWARD})|(?P<fwd>{_FORWARD}))\b", re.I)
_CLAUSE_END = re.compile(r"[.;!?]|\s[-–—]\s")
_PAIRS = (  # one side | the other side
    "rose rise risen rises rising increase increased increases increasing grew grow grows growing gained gain "
    "gains climbed climbs doubled tripled jumped | fell fall fallen falls falling decrease decreased decreases "
    "decreasing shrank shrink shrinks dropped drop drops declined decline declines lost halved",
    "above exceeds exceed exceeding higher greater | below lower less fewer",
    "before earlier prior | after later",
    "faster longer larger bigger | slower shorter smaller",
    "allowed permitted | forbidden prohibited",
    "required mandatory | optional",
)
_DIRECTIONS = tuple(
    (frozenset(up.split()), frozenset(down.split())) for up, down in (p.split("|") for p in _PAIRS)
)
_WORD = re.compile(r"[a-z]+")
Binding = tuple[str, set[str], frozenset[str]]  # the value as written, the words before it, its readings


def misrelated(
    sentence: str, support: str, bindings: list[Binding], support_bindings: list[Binding]
) -> str | None:
    """Why the sentence relates its facts otherwise than the support, or None."""
    return (
        _swapped(bindings, support_bindings)
        or _changed_cause(sentence, support)
        or _reversed(sentence, support)
    )


def _swapped(own: list[Binding], theirs: list[Binding]) -> str | None:
    if len(own) < 2 or len(theirs) < 2:
        return None
    counts = Counter(t for _, words, _ in theirs for t in words)
    for written, words, readings in own:
        scored = sorted(
            ((len({t for t in words & w if counts[t] == 1}), r) for _, w, r in theirs), key=lambda x: -x[0]
        )
        best, there = scored[0]
        if best == 0 or (len(scored) > 1 and scored[1][0] == best) or there & readings:
            continue
        if any(there & other for _, _, other in own):
            return f"{written!r} is given for other words than in the cited passage (values swapped)"
    return None


def _cause(text: str) -> set[str] | None:
    """The content terms of the cause the text gives, or None when it gives none."""
    m = _CAUSE.search(text)
    if m is None:
        return None
    if m.group("back"):
        rest = text[m.end() :]
        end = _CLAUSE_END.search(rest)
        return term_set(rest[: end.start()] if end else rest)
    head = text[: m.start()]
    starts = list(_CLAUSE_END.finditer(head))
    return term_set(head[starts[-1].end() :] if starts else head)


def _changed_cause(sentence: str, support: str) -> str | None:
    own = _cause(sentence)
    if not own:
        return None
    theirs = _cause(support)
    if theirs is None:
        return "it gives a cause its quote does not state"
    if len(own & theirs) / len(own) < CAUSE_SHARE:
        return "it gives another cause than the cited passage"
    return None


def _reversed(sentence: str, support: str) -> str | None:
    own, theirs = set(_WORD.findall(sentence.lower())), set(_WORD.findall(support.lower()))
    for up, down in _DIRECTIONS:
        for said, other in ((up, down), (down, up)):
            if own & said and theirs & other and not theirs & said and not own & other:
                word = sorted(own & said)[0]
                return f"{word!r} reverses the direction the cited passage states"
    return None
