"""Who the CLI may ask as: the people the folder sources' people files list, and the configured default.

A mistyped `--as` must not quietly answer with public access only, so an email no directory knows is an
error with a hint; with no people file anywhere (sources whose permissions come from OAuth links only) any
email is taken as given.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.runtime import Runtime


class AskerError(ValueError):
    """No usable asker: none given and none configured, or an email no people file lists."""


@dataclass(frozen=True)
class KnownPerson:
    email: str
    name: str
    groups: list[str]
    sources: list[str]
    principals: list[str]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def directory(rt: Runtime) -> list[KnownPerson]:
    """Everyone some source's people file lists, merged across sources, with their principals."""
    merged: dict[str, dict[str, Any]] = {}
    for connector in rt.connectors():
        for person in getattr(connector, "directory", list)():
            entry = merged.setdefault(person.email, {"name": "", "groups": set(), "sources": []})
            entry["name"] = entry["name"] or person.name
            entry["groups"].update(person.groups)
            entry["sources"].append(connector.name)
    return [
        KnownPerson(
            email=email,
            name=entry["name"],
            groups=sorted(entry["groups"]),
            sources=entry["sources"],
            principals=sorted(rt.principals_for_email(email)),
        )
        for email, entry in sorted(merged.items())
    ]


def resolve_asker(rt: Runtime, given: str | None) -> str:
    email = (given or rt.default_asker() or "").strip().lower()
    if not email:
        raise AskerError("whom to ask as? Pass --as EMAIL or set SLEUTH_DEFAULT_ASKER (see `sleuth people`).")
    known = rt.known_people()
    if known and email not in known:
        close = difflib.get_close_matches(email, known, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise AskerError(f"nobody called {email} is known; {hint}`sleuth people` lists who is.")
    return email


def visible_documents(rt: Runtime, principals: list[str]) -> tuple[int, int]:
    """(documents these principals may open, documents indexed)."""
    return rt.store.visible_count(principals), rt.store.stats()["documents"]
