"""The gap log: open gaps by date, apart from answers, so recurring gaps point at missing *sources*.

Entries hold the gap's kind, the question's own words and who asked, never passage text or titles of what was
read: the log outlives the thread. Admins see every entry; anyone else sees only entries of their own
questions. One Markdown file per day under `<data dir>/gaps/`.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

_LINE = re.compile(
    r"^- (?P<time>\d\d:\d\d) \[(?P<kind>[a-z_]+)\] (?P<what>.+?) \(asked by (?P<asker>[^:]*): (?P<question>.*)\)$"
)


class GapLog:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()

    def append(
        self, question: str, gaps: list[dict[str, Any]], *, asker: str = "", when: datetime | None = None
    ) -> None:
        if not gaps:
            return
        when = when or datetime.now(UTC)
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{when.date().isoformat()}.md"
        lines = [
            f"- {when:%H:%M} [{g['kind']}] {_clean(g['log_what'])} (asked: {_clean(question)})\n"
            for g in gaps
        ]
        with self._lock:
            new = not path.exists()
            with path.open("a", encoding="utf-8") as fh:
                if new:
                    fh.write(f"# Open gaps {when.date().isoformat()}\n\n")
                fh.writelines(lines)

    def entries(self, *, viewer: str | None = None, since: date | None = None) -> list[dict[str, str]]:
        """Raw entries; with `viewer` only that person's own (None: every entry, for admins)."""
        out: list[dict[str, str]] = []
        for path in sorted(self.folder.glob("*.md")) if self.folder.is_dir() else []:
            if since and path.stem < since.isoformat():
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                m = _LINE.match(line)
                if m and (viewer is None or m["asker"] == viewer):
                    out.append({"day": path.stem, **m.groupdict()})
        return out

    def summary(
        self, *, since: date | None = None, top: int = 20, viewer: str | None = None
    ) -> list[dict[str, Any]]:
        """Recurring gaps, most frequent first, with the days they were seen."""
        counts: Counter[tuple[str, str]] = Counter()
        days: dict[tuple[str, str], set[str]] = {}
        for entry in self.entries(viewer=viewer, since=since):
            key = (entry["kind"], entry["what"].lower())
            counts[key] += 1
            days.setdefault(key, set()).add(entry["day"])
        return [
            {"kind": kind, "what": what, "count": n, "days": sorted(days[(kind, what)])}
            for (kind, what), n in counts.most_common(top)
        ]


def _clean(text: str) -> str:
    return " ".join(text.split())[:200].replace("(asked by", "(asked")
