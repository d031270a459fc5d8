"""Candidate answer units: a passage read as sentences, list items (with their heading) and table rows
(rendered with their header cells), each carrying its document title, heading and place in the passage. Text
written to an assistant is no unit (`instructions`)."""

from __future__ import annotations

from graph_flows.reader.features import Candidate
from graph_flows.reader.instructions import readable
from graph_flows.reading import units

MAX_UNITS = 60  # units read from one passage (a chunk holds ~10 sentences or a table of rows)


def split_units(text: str, *, title: str, passage: str) -> list[Candidate]:
    """The passage's units as candidates, in reading order."""
    found = units(text)[:MAX_UNITS]
    kept = set(readable([u.text for u in found], text))
    return [
        Candidate(u.text, title, u.heading, passage, text, position)
        for position, u in enumerate(found)
        if u.text in kept
    ]
