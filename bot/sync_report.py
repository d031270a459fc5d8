"""What a sync run tells the person who started it, beyond the counts table: why it is not ok, what was
skipped (one line), which ACL entries match nobody, and the failures (the first few; all of them through
`sleuth sources failures NAME`). Pure: rich markup strings in, no console."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.markup import escape

if TYPE_CHECKING:
    from connectors.sync import SyncSummary

SHOWN_IDS = 3


def summary_lines(s: SyncSummary, *, shown: int) -> Iterator[str]:
    if s.failures:
        counts = ", ".join(f"{reason} {n}" for reason, n in s.failures_by_reason.items())
        yield f"[yellow]{s.failed} failed[/] by reason: {escape(counts)}"
        for f in s.failures[:shown]:
            detail = f" ({f['detail']})" if f.get("detail") else ""
            yield f"  [yellow]failed[/] {escape(f['id'])}: {escape(f['reason'] + detail)}"
        if len(s.failures) > shown:
            yield f"  ... {len(s.failures) - shown} more: `sleuth sources failures {s.source}` lists them all"
    if s.skipped:
        total = sum(len(ids) for ids in s.skipped.values())
        parts = [f"{reason} {len(ids)} ({_some(ids)})" for reason, ids in s.skipped.items()]
        yield f"[dim]skipped {total} file(s) that are not documents: {escape('; '.join(parts))}[/]"
    for warning in s.acl_warnings:
        docs = warning["documents"]
        yield (
            f"[yellow]warning:[/] ACL entry {escape(warning['principal'])} matches nobody in the people file; "
            f"{len(docs)} document(s) carry it: {escape(_some(docs, limit=10))}"
        )
    if s.error:
        yield f"[red]stopped:[/] {escape(s.error)}"


def _some(ids: list[str], *, limit: int = SHOWN_IDS) -> str:
    names = [i.split(":", 1)[-1] for i in ids[:limit]]
    return ", ".join(names) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
