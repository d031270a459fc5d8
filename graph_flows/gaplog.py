"""The gap log: open gaps apart from answers, in the database, so recurring gaps point at missing *sources*.

Each entry keeps what the flow knew when it gave up: the gap's kind and wording (the question's own aspect
text, never a passage title), what is missing as a normalised subject (names resolved through the store's
alias table to the document they denote, the rest as stemmed content terms), the closest passages' document
ids and sources (ids only: titles are looked up per viewer when shown), who asked, the thread and the time;
and what the wording was derived from besides the asker's own words (a follow-up made whole with a name an
answer stated): those documents' ids and the earlier askers, so a viewer reads the wording only if they may open
every one of them (`graph_flows.derived.shown`), and `forget` takes an earlier asker's words back out.

Reading groups entries by subject (`summary`), so "Where do I park at the Oakland office?" and "Oakland office
parking?" count as one recurring gap. Admins read every entry; anyone else only their own (`viewer`).
`export` writes the dated notes (`gaps-YYYY-MM-DD.md`); `forget` removes one person's entries, and puts back
the typed question in others' entries whose wording reused that person's question.

Table `gap_entries` (SQLAlchemy Core, so SQLite and PostgreSQL alike), created on first use.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Column, Engine, Float, String, Text, delete, insert, select, update

from connectors.database import create_tables, owned_table, serial_id
from connectors.text import normalise
from graph_flows.derived import CanOpen, Derived, docs_of, shown
from graph_flows.reading import terms

ENTITY = "@"  # subject tokens that name a document (through the alias table) start with this
SAME_GAP = 0.5  # Jaccard overlap of two subjects at or above which they are one recurring gap
MAX_WHAT_CHARS = 300

gap_entries = owned_table(
    "gap_entries",
    serial_id(),
    Column("at", Float, nullable=False, index=True),
    Column("kind", String(32), nullable=False),
    Column("what", Text, nullable=False),  # the gap in the question's words
    Column("subject", Text, nullable=False),  # JSON list: "@<doc id>" for a resolved name, else stemmed terms
    Column("question", Text, nullable=False),
    Column("asker", String(320), nullable=False, index=True),
    Column("thread", String(200), nullable=False, default=""),
    Column("closest", Text, nullable=False, default="[]"),  # JSON [{"doc_id", "source"}], best first
    # JSON lists: the documents the wording was derived from, and the earlier askers whose words it reuses
    Column("derived_from", Text, nullable=False, default="[]", server_default="[]"),
    Column("derived_askers", Text, nullable=False, default="[]", server_default="[]"),
)


class Names(Protocol):
    """What subject normalisation needs of the store, as the asker sees it (`graph_flows.knowledge.StoreLexicon`)."""

    def names_in(self, text: str, *, strict: bool = True) -> list[str]: ...

    def resolve(self, name: str) -> list[str]: ...


@dataclass(frozen=True)
class GapEntry:
    id: int
    at: datetime
    kind: str
    what: str
    subject: tuple[str, ...]
    question: str
    asker: str
    thread: str
    closest: tuple[tuple[str, str], ...]  # (doc id, source)
    derived_from: tuple[str, ...] = ()
    derived_askers: tuple[str, ...] = ()

    @property
    def day(self) -> str:
        return self.at.date().isoformat()

    @property
    def derived(self) -> Derived:
        """The wording with what it came from; the typed question is what a viewer who may not open those
        documents reads instead."""
        return Derived(self.what, self.derived_from, self.question)


@dataclass
class GapGroup:
    """One recurring gap: entries about the same missing thing."""

    entries: list[GapEntry] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.entries)

    @property
    def askers(self) -> list[str]:
        return sorted({e.asker for e in self.entries})

    @property
    def first(self) -> datetime:
        return min(e.at for e in self.entries)

    @property
    def last(self) -> datetime:
        return max(e.at for e in self.entries)

    @property
    def kinds(self) -> list[str]:
        return [k for k, _ in Counter(e.kind for e in self.entries).most_common()]

    @property
    def typical(self) -> GapEntry:
        """The most typical entry (the one closest to all the others): its wording labels the group."""
        return max(
            self.entries, key=lambda e: (sum(_overlap(e.subject, o.subject) for o in self.entries), -e.id)
        )

    def label(self, can_open: CanOpen) -> str:
        """The typical entry's wording as a viewer who may open `can_open`'s documents reads it."""
        return shown(self.typical.derived, can_open)

    def closest(self, top: int = 3) -> list[tuple[str, str]]:
        """The documents the closest passages came from, most often first."""
        counts = Counter(c for e in self.entries for c in e.closest)
        return [c for c, _ in counts.most_common(top)]


def gap_subject(text: str, names: Names | None) -> list[str]:
    """What a gap is about, normalised: each known name (title, key, alias) becomes the document it denotes,
    so "S-8" and "Supplier 8" are one subject; the remaining words become stemmed content terms."""
    tokens: list[str] = []
    rest = normalise(text)
    for name in names.names_in(text, strict=False) if names is not None else []:
        docs = names.resolve(name)
        if not docs:
            continue
        tokens.append(ENTITY + docs[0])
        rest = f" {rest} ".replace(f" {normalise(name)} ", " ").strip()
    return list(dict.fromkeys([*tokens, *terms(rest)]))


class GapLog:
    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine, self._clock = engine, clock
        create_tables(gap_entries.metadata, engine)

    def append(
        self,
        question: str,
        gaps: Sequence[dict[str, Any]],
        *,
        asker: str,
        thread: str = "",
        when: datetime | None = None,
    ) -> None:
        """One row per gap: {"kind", "log_what", "subject"?, "closest"?: [{"doc_id", "source"}],
        "derived_from"?: [doc id], "derived_askers"?: [asker]}."""
        if not gaps:
            return
        at = when.timestamp() if when is not None else self._clock()
        rows = [
            {
                "at": at,
                "kind": g["kind"],
                "what": _clean(g["log_what"]),
                "subject": json.dumps(list(g.get("subject") or gap_subject(g["log_what"], None))),
                "question": _clean(question),
                "asker": asker,
                "thread": thread,
                "closest": json.dumps(
                    [{"doc_id": c["doc_id"], "source": c["source"]} for c in g.get("closest") or []]
                ),
                "derived_from": json.dumps(list(g.get("derived_from") or [])),
                "derived_askers": json.dumps(list(g.get("derived_askers") or [])),
            }
            for g in gaps
        ]
        with self._engine.begin() as conn:
            conn.execute(insert(gap_entries), rows)

    def entries(self, *, viewer: str | None = None, since: date | datetime | None = None) -> list[GapEntry]:
        """Entries oldest first; with `viewer` only that person's own (None: every entry, for admins)."""
        query = select(gap_entries).order_by(gap_entries.c.at, gap_entries.c.id)
        if viewer is not None:
            query = query.where(gap_entries.c.asker == viewer)
        if since is not None:
            query = query.where(gap_entries.c.at >= _timestamp(since))
        with self._engine.connect() as conn:
            return [_entry(row) for row in conn.execute(query)]

    def summary(
        self, *, since: date | datetime | None = None, top: int = 20, viewer: str | None = None
    ) -> list[GapGroup]:
        """Recurring gaps, most asked first (then most recent)."""
        groups = group_gaps(self.entries(viewer=viewer, since=since))
        groups.sort(key=lambda g: (-g.count, -g.last.timestamp()))
        return groups[:top]

    def forget(self, askers: Iterable[str]) -> int:
        """Removes every entry of these askers (a user's `/sleuth forget`) and, in other people's entries whose
        wording reused their question, puts back what that asker typed; returns how many entries were removed."""
        wanted = {a for a in askers if a}
        if not wanted:
            return 0
        with self._engine.begin() as conn:
            removed = conn.execute(delete(gap_entries).where(gap_entries.c.asker.in_(wanted))).rowcount or 0
            reused = conn.execute(
                select(gap_entries.c.id, gap_entries.c.question, gap_entries.c.derived_askers).where(
                    gap_entries.c.derived_askers != "[]"
                )
            ).all()
            for row in (r for r in reused if set(json.loads(r.derived_askers or "[]")) & wanted):
                as_typed = {"what": row.question, "subject": json.dumps(gap_subject(row.question, None))}
                conn.execute(
                    update(gap_entries)
                    .where(gap_entries.c.id == row.id)
                    .values(**as_typed, derived_from="[]", derived_askers="[]")
                )
        return removed

    def export(
        self,
        folder: Path,
        *,
        since: date | datetime | None = None,
        can_open: Callable[[str], bool] | None = None,
    ) -> list[Path]:
        """Writes one `gaps-YYYY-MM-DD.md` note per day that has entries; returns the files written. With
        `can_open`, closest documents the reader may not open are counted, not named, and wording derived from
        one of them reads as typed."""
        by_day: dict[str, list[GapEntry]] = {}
        for entry in self.entries(since=since):
            by_day.setdefault(entry.day, []).append(entry)
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for day, entries in sorted(by_day.items()):
            path = folder / f"gaps-{day}.md"
            path.write_text(day_note(day, entries, can_open), encoding="utf-8")
            written.append(path)
        return written


def group_gaps(entries: Iterable[GapEntry]) -> list[GapGroup]:
    """Entries about the same missing thing, together: an entry joins the first group holding an entry whose
    subject overlaps its own by at least `SAME_GAP` and names no other document."""
    groups: list[GapGroup] = []
    for entry in entries:
        home = next((g for g in groups if any(_same(entry.subject, o.subject) for o in g.entries)), None)
        if home is None:
            home = GapGroup()
            groups.append(home)
        home.entries.append(entry)
    return groups


def day_note(day: str, entries: Sequence[GapEntry], can_open: Callable[[str], bool] | None = None) -> str:
    """The dated note: one line per entry (time, kind, gap, asker, thread, closest documents); with
    `can_open`, as that reader may read it."""
    lines = [f"# Open gaps {day}", ""]
    for e in entries:
        named = [f"{doc} ({source})" for doc, source in e.closest if can_open is None or can_open(doc)]
        if len(named) < len(e.closest):
            named.append(f"{len(e.closest) - len(named)} you cannot open")
        closest = ", ".join(named) or "none"
        what = e.what if can_open is None else shown(e.derived, can_open)
        lines.append(
            f"- {e.at:%H:%M} [{e.kind}] {what} (asked by {e.asker or 'unknown'} in {e.thread or '-'}; "
            f"closest: {closest})"
        )
    return "\n".join(lines) + "\n"


def _same(a: Sequence[str], b: Sequence[str]) -> bool:
    ents_a, ents_b = {t for t in a if t.startswith(ENTITY)}, {t for t in b if t.startswith(ENTITY)}
    if ents_a and ents_b and not ents_a & ents_b:
        return False
    return _overlap(a, b) >= SAME_GAP


def _overlap(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def _entry(row: Any) -> GapEntry:
    return GapEntry(
        id=row.id,
        at=datetime.fromtimestamp(row.at, UTC),
        kind=row.kind,
        what=row.what,
        subject=tuple(json.loads(row.subject or "[]")),
        question=row.question,
        asker=row.asker,
        thread=row.thread or "",
        closest=tuple((c["doc_id"], c["source"]) for c in json.loads(row.closest or "[]")),
        derived_from=docs_of(json.loads(row.derived_from or "[]")),
        derived_askers=docs_of(json.loads(row.derived_askers or "[]")),
    )


def _timestamp(since: date | datetime) -> float:
    if isinstance(since, datetime):
        return since.timestamp()
    return datetime(since.year, since.month, since.day, tzinfo=UTC).timestamp()


def _clean(text: str) -> str:
    return " ".join(str(text).split())[:MAX_WHAT_CHARS]
