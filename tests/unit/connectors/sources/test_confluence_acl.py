"""Confluence ACL mapping, table-driven over every entry shape the API documents: v1 read restrictions
(`restriction/byOperation/read`: `User` of type known/user/unknown/anonymous, `Group` by name and/or id) and
v2 space permission assignments (principal `user`, `group`, `role`). A restriction entry Sleuth cannot map
leaves the page to nobody, whatever else the restriction names; a space grant it cannot map is left out."""

from __future__ import annotations

from typing import Any

import pytest

from connectors.base import PUBLIC
from connectors.sources.confluence.mapping import effective_acl, restriction_principals, space_read_principals

NAMES = {"g-eng": "Engineering"}  # group ids whose names the permission reader could look up
SEC = {"type": "known", "accountId": "acc-sec", "accountType": "atlassian", "email": "sec@acme.io"}
MEMBERS = {"group:wiki:engineering": {"user:wiki:acc-ann"}}
READ = {"key": "read", "targetType": "space"}

USERS: list[tuple[Any, set[str] | None]] = [  # None: maps to no principal
    (SEC, {"user:wiki:acc-sec", "user:sec@acme.io"}),
    ({"type": "known", "accountId": "acc-1", "email": "", "publicName": "A"}, {"user:wiki:acc-1"}),
    ({"type": "user", "accountId": "acc-1"}, {"user:wiki:acc-1"}),
    ({"accountId": "acc-1"}, {"user:wiki:acc-1"}),  # type left out: a known user
    ({"type": "known", "accountId": "bot-1", "accountType": "app"}, {"user:wiki:bot-1"}),
    ({"type": "unknown", "accountId": "acc-gone", "displayName": "Unknown user"}, None),
    ({"type": "unknown", "displayName": "Unknown user"}, None),
    ({"type": "anonymous"}, None),
    ({"type": "known", "username": "ann", "userKey": "ff8080"}, None),  # Server-style, no account id
    ({"type": "known", "accountId": "unknown"}, None),
    ("acc-1", None),
]
GROUPS: list[tuple[Any, set[str] | None]] = [
    ({"type": "group", "name": "Security", "id": "g-sec"}, {"group:wiki:security"}),
    ({"type": "group", "name": "security"}, {"group:wiki:security"}),
    ({"type": "group", "id": "g-eng"}, {"group:wiki:engineering"}),  # by id, named by the lookup
    ({"type": "group", "id": "g-gone"}, None),  # by id only, and no name for it
    ({"type": "group"}, None),
    ({}, None),
]
USER_IDS = ["known", "email-hidden", "type-user", "type-omitted", "app", "unknown", "unknown-no-id",
            "anonymous", "username-only", "account-unknown", "not-an-object"]  # fmt: skip
GROUP_IDS = ["name-and-id", "name", "id-named", "id-only", "no-name-or-id", "empty"]


def _body(users: list[Any], groups: list[Any]) -> dict[str, Any]:
    return {"restrictions": {"user": {"results": users}, "group": {"results": groups}}}


def _page_acl(users: list[Any], groups: list[Any], space: set[str] | None = None) -> frozenset[str]:
    level = restriction_principals(_body(users, groups), "wiki", NAMES)
    restricted = [level.restricted if level is not None else None]
    return effective_acl(space or {PUBLIC}, restricted, lambda g: MEMBERS.get(g, set()))


@pytest.mark.parametrize(("entry", "principals"), USERS, ids=USER_IDS)
def test_restriction_users(entry: Any, principals: set[str] | None) -> None:
    assert _page_acl([entry], []) == (principals or set())
    # Beside an entry that maps, one that does not still leaves the page to nobody.
    expected = (principals | {"group:wiki:security"}) if principals else set()
    assert _page_acl([entry], [{"type": "group", "name": "security"}]) == expected


@pytest.mark.parametrize(("entry", "principals"), GROUPS, ids=GROUP_IDS)
def test_restriction_groups(entry: Any, principals: set[str] | None) -> None:
    assert _page_acl([], [entry]) == (principals or set())
    expected = (principals | {"user:wiki:acc-sec", "user:sec@acme.io"}) if principals else set()
    assert _page_acl([SEC], [entry]) == expected


def test_unmapped_entries_are_described_for_the_report() -> None:
    users = [{"type": "unknown"}, SEC]
    level = restriction_principals(_body(users, [{"type": "group", "id": "g-gone"}]), "wiki", NAMES)
    assert level is not None and level.restricted == frozenset()
    assert level.detail() == "user of type unknown; group given by id only (g-gone)"


def test_no_entries_is_no_restriction() -> None:
    assert restriction_principals(_body([], []), "wiki") is None
    assert restriction_principals({}, "wiki") is None
    assert _page_acl([], [], space={"group:wiki:engineering"}) == {"group:wiki:engineering"}


@pytest.mark.parametrize(
    ("principal", "operation", "principals", "unmapped"),
    [
        ({"type": "user", "id": "acc-ann"}, READ, {"user:wiki:acc-ann"}, False),
        ({"type": "user"}, READ, set(), True),
        ({"type": "group", "id": "g-eng"}, READ, {"group:wiki:engineering"}, False),
        ({"type": "group", "id": "g-gone"}, READ, set(), True),
        ({"type": "role", "id": "anonymous-users"}, READ, {PUBLIC}, False),
        ({"type": "access_class", "id": "anonymous-users"}, READ, {PUBLIC}, False),
        ({"type": "role", "id": "licensed-users"}, READ, set(), True),
        ({}, READ, set(), True),
        ({"type": "group", "id": "g-eng"}, {"key": "delete", "targetType": "page"}, set(), False),
        ({"type": "group", "id": "g-eng"}, {"key": "read", "targetType": "page"}, set(), False),
    ],
    ids=[
        "user",
        "user-no-id",
        "group",
        "group-unnamed",
        "anonymous-role",
        "anonymous-class",
        "other-role",
        "no-principal",
        "not-read",
        "not-space",
    ],
)
def test_space_read_grants(
    principal: dict[str, Any], operation: dict[str, str], principals: set[str], unmapped: bool
) -> None:
    """A grant Sleuth cannot map is left out (narrower) and listed; other operations are no grants at all."""
    found = space_read_principals(
        [{"id": "1", "principal": principal, "operation": operation}], NAMES, "wiki"
    )
    assert found.principals == principals
    assert bool(found.unmapped) is unmapped


@pytest.mark.parametrize(
    ("space", "levels", "acl"),
    [
        ({"group:wiki:engineering"}, [None, None], {"group:wiki:engineering"}),
        ({"group:wiki:engineering"}, [frozenset({"user:wiki:acc-ann"})], {"user:wiki:acc-ann"}),
        ({"group:wiki:engineering"}, [frozenset({"user:wiki:out"})], set()),
        ({PUBLIC}, [frozenset({"group:wiki:sec"})], {"group:wiki:sec"}),
        ({"group:wiki:engineering"}, [frozenset({"group:wiki:a"}), frozenset({"group:wiki:b"})], set()),
        ({PUBLIC}, [None, frozenset()], set()),  # an ancestor restricted to nobody: nobody, not the space
    ],
    ids=[
        "unrestricted",
        "restricted",
        "outside-the-space",
        "never-public",
        "disjoint-levels",
        "nobody-level",
    ],
)
def test_effective_acl(space: set[str], levels: list[frozenset[str] | None], acl: set[str]) -> None:
    assert effective_acl(space, levels, lambda g: MEMBERS.get(g, set())) == acl
