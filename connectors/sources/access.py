"""Who passes several access checks at once, in principal sets.

A document an ACL check gates twice (Jira: Browse Projects *and* the issue's security level; Confluence: space
read *and* every view restriction on the page and its ancestors) is readable by those who pass every check.
An ACL is a set of principals any one of which suffices, so the intersection of two checks is not the
intersection of their sets: a group on one side and a user of that group on the other both describe that user.
`intersect` keeps what every side names, plus every user who reaches every side (named there, or a member of a
group named there). A group whose members cannot be listed counts only where every side names it: narrower,
never wider. A side that admits everyone (`public`) imposes nothing; the result is never `public` unless every
side is.

A check is mapped into a `Mapped`: the principals of the entries Sleuth can express, and a description of
each entry it cannot (a Confluence user of type `unknown`, a group given by id only, a Jira holder kind it
does not model). A *restriction* with such an entry admits nobody (`Mapped.restricted`): who that entry names
is unknown, and Sleuth shows a document only under an ACL it read in full. A *grant* with one only loses that
entry (narrower). Either way the source yields a `Failure` (`UNMAPPED` / `UNMAPPED_GRANT`), so
`sleuth sources failures` says what is hidden and why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from connectors.base import PUBLIC

Members = Callable[[str], set[str]]  # group principal -> user principals of its members (empty: unknown)
UNMAPPED = "restriction entry Sleuth cannot map: visible to no one"
UNMAPPED_GRANT = "permission grant Sleuth cannot map: its holders are not granted through it"


@dataclass(frozen=True)
class Mapped:
    """One access check's entries as principals, and what the entries that map to none are (for the report)."""

    principals: frozenset[str] = frozenset()
    unmapped: tuple[str, ...] = ()

    def __or__(self, other: Mapped) -> Mapped:
        return Mapped(self.principals | other.principals, self.unmapped + other.unmapped)

    @property
    def restricted(self) -> frozenset[str]:
        """Who a restriction made of these entries admits: nobody once any entry could not be mapped."""
        return frozenset() if self.unmapped else self.principals

    def detail(self) -> str:
        """The unmapped entries, once each, as a failure's detail."""
        return "; ".join(dict.fromkeys(self.unmapped))


def intersect(sides: Iterable[set[str] | frozenset[str]], members: Members) -> frozenset[str]:
    checks = [set(side) for side in sides]
    if all(PUBLIC in side for side in checks):
        return frozenset({PUBLIC})
    gating = [side - {PUBLIC} for side in checks if PUBLIC not in side]
    if len(gating) == 1:
        return frozenset(gating[0])
    common = set.intersection(*gating)
    reach = []
    for side in gating:
        users = {p for p in side if p.startswith("user:")}
        for group in sorted(p for p in side if p.startswith("group:")):
            users |= members(group)
        reach.append(users)
    return frozenset(common | set.intersection(*reach))
