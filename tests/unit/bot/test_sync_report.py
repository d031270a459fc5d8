"""What a sync run prints besides its counts: failures by reason, every failure reachable, one skip line,
ACL warnings."""

from __future__ import annotations

from bot.sync_report import summary_lines
from connectors.sync import SyncSummary


def test_failures_are_counted_by_reason_and_the_rest_are_pointed_to() -> None:
    failures = [
        {"id": f"team:tickets/T-{n}.md", "reason": "bad front matter", "detail": ""} for n in range(23)
    ]
    failures.append({"id": "team:a.json", "reason": "bad JSON", "detail": "line 3"})
    summary = SyncSummary(source="team", failed=24, failures=failures, status="partial")
    lines = list(summary_lines(summary, shown=20))
    assert lines[0] == "[yellow]24 failed[/] by reason: bad front matter 23, bad JSON 1"
    assert len([line for line in lines if "failed[/] team:" in line]) == 20
    assert lines[21] == "  ... 4 more: `sleuth sources failures team` lists them all"


def test_skipped_files_take_one_line_and_acl_warnings_name_documents() -> None:
    summary = SyncSummary(
        source="team",
        skipped={
            "not a document type (.png)": ["team:a.png", "team:b.png"],
            "CSV that is not a Jira export": ["team:x.csv"],
        },
        acl_warnings=[{"principal": "group:team:finanse", "documents": ["team:pages/payroll"]}],
    )
    lines = list(summary_lines(summary, shown=20))
    assert lines == [
        "[dim]skipped 3 file(s) that are not documents: not a document type (.png) 2 (a.png, b.png); "
        "CSV that is not a Jira export 1 (x.csv)[/]",
        "[yellow]warning:[/] ACL entry group:team:finanse matches nobody in the people file; "
        "1 document(s) carry it: pages/payroll",
    ]
