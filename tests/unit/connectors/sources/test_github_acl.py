"""GitHub ACL mapping, table-driven over the entry shapes the REST API documents: a repository's `private` and
`visibility` (public, private, internal), `GET /repos/{o}/{r}/collaborators` entries (`login`, `type`,
`permissions`, `role_name`; team members and org members with base access included) and
`GET /repos/{o}/{r}/teams` entries (`slug`, `name`, `permission`). An entry that maps to no principal leaves
the repository's issues to nobody."""

from __future__ import annotations

from typing import Any

import pytest

from connectors.base import PUBLIC
from connectors.sources.github.mapping import repo_acl

PRIVATE = {"private": True, "visibility": "private", "owner": {"login": "Acme"}}
ALICE = {"login": "alice", "id": 1, "type": "User", "permissions": {"pull": True}, "role_name": "read"}


@pytest.mark.parametrize(
    ("repo", "collaborators", "teams", "acl"),
    [
        ({"private": False, "visibility": "public"}, [], [], {PUBLIC}),
        ({"private": False}, [], [], {PUBLIC}),  # older answers carry no visibility
        (PRIVATE, [], [], set()),  # nobody listed: nobody, never the world
        ({"visibility": "public"}, [ALICE], [], {"user:gh:alice"}),  # `private` missing: not public
        ({"private": True, "visibility": "public"}, [ALICE], [], {"user:gh:alice"}),  # contradictory: closed
        (PRIVATE, [ALICE | {"login": "Bob", "type": "Bot"}], [], {"user:gh:bob"}),
        (PRIVATE, [{"login": "Bob", "role_name": "maintain"}], [], {"user:gh:bob"}),
        (PRIVATE, [{"login": "Bob", "permissions": {"pull": False}}], [], set()),  # no read: no grant
        (PRIVATE, [ALICE, {"id": 7, "type": "User"}], [], set()),  # no login: unmapped
        (PRIVATE, [ALICE, "alice"], [], set()),
        (PRIVATE, [], [{"slug": "core", "name": "Core", "permission": "pull"}], {"group:gh:acme/core"}),
        (PRIVATE, [ALICE], [{"name": "Core", "permission": "pull"}], set()),  # no slug: unmapped
        ({"private": True, "visibility": "private"}, [], [{"slug": "core"}], set()),  # no owner to scope it
        ({**PRIVATE, "visibility": "internal"}, [ALICE], [], {"user:gh:alice", "group:gh:acme"}),
        ({"private": True, "visibility": "internal"}, [ALICE], [], set()),  # internal to an unknown org
    ],
    ids=["public", "public-no-visibility", "private-empty", "private-missing", "contradictory", "bot",
         "role-name", "no-pull", "no-login", "not-an-object", "team", "team-no-slug", "team-no-owner",
         "internal", "internal-no-owner"],
)  # fmt: skip
def test_repo_acl(repo: dict[str, Any], collaborators: list[Any], teams: list[Any], acl: set[str]) -> None:
    mapped = repo_acl(repo, collaborators, teams, "gh")
    assert mapped.restricted == acl


def test_unmapped_entries_are_described_for_the_report() -> None:
    mapped = repo_acl(PRIVATE, [ALICE, {"id": 7}], [{"name": "Core"}], "gh")
    assert mapped.detail() == "collaborator without a login; team without a slug of acme"
