from __future__ import annotations

import pytest

from connectors.base import PUBLIC
from connectors.sources.access import intersect

MEMBERS = {
    "group:j:eng": {"user:j:ann", "user:j:sec"},
    "group:j:security": {"user:j:sec", "user:j:out"},
}


@pytest.mark.parametrize(
    ("sides", "expected"),
    [
        ([{PUBLIC}, {PUBLIC}], {PUBLIC}),
        ([{PUBLIC}, {"group:j:security"}], {"group:j:security"}),  # an open side imposes nothing
        ([{"group:j:eng"}, {"group:j:security"}], {"user:j:sec"}),  # only who is in both
        ([{"group:j:eng"}, {"user:j:out"}], set()),  # named on one side, outside the other
        ([{"group:j:eng", "user:j:x"}, {"group:j:eng"}], {"group:j:eng", "user:j:ann", "user:j:sec"}),
        ([{"group:j:unlisted"}, {"group:j:unlisted", "group:j:security"}], {"group:j:unlisted"}),
    ],
    ids=["open", "open-side", "groups", "user-outside", "common-group", "unlisted-group"],
)
def test_intersect(sides: list[set[str]], expected: set[str]) -> None:
    assert intersect(sides, lambda g: MEMBERS.get(g, set())) == expected
