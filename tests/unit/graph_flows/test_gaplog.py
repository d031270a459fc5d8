"""The gap log reads back what the flow writes: entries, the per-asker filter and the recurring summary."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from graph_flows.gaplog import GapLog

WHEN = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)


def test_an_entry_written_is_read_back_for_its_asker_only(tmp_path: Path) -> None:
    log = GapLog(tmp_path / "gaps")
    gap = {"kind": "missing_source", "log_what": "parking at the Oakland office"}
    log.append("Where do I park at the Oakland office?", [gap], asker="ann@acme.io", when=WHEN)

    [entry] = log.entries(viewer="ann@acme.io")
    assert (entry["kind"], entry["what"], entry["asker"]) == (
        "missing_source",
        "parking at the Oakland office",
        "ann@acme.io",
    )
    assert entry["question"] == "Where do I park at the Oakland office?"
    assert log.entries(viewer="bob@acme.io") == []
    assert [g["count"] for g in log.summary()] == [1]
