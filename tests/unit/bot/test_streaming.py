"""How an answer's text is cut for streaming: after sentences, about a chunk's size, nothing lost or added."""

from __future__ import annotations

from bot.streaming import chunks

ANSWER = (
    "The 4.2 Android release slipped to 2026-04-07 because the Pixel 8 crash on start was a P1 [1]. "
    "The fix needed the 3.5.1 SDK [2]! Is that all? Mostly:\n"
    "• QA found two more crashes [3]\n"
    "• the store review took 3 days [4]"
)


def test_chunks_are_the_text_cut_after_sentences() -> None:
    pieces = chunks(ANSWER, size=80)
    assert "".join(pieces) == ANSWER and len(pieces) > 2
    assert all(p.rstrip().endswith((".", "!", "?", "]", ":")) or p.endswith("\n") for p in pieces[:-1])
    assert all("3.5.1 SDK" in p for p in chunks(ANSWER, size=10) if "SDK" in p)  # "4.2", "3.5.1": no ends


def test_a_short_text_is_one_chunk() -> None:
    assert chunks("Yes [1].") == ["Yes [1]."] and chunks("") == [""]
