"""Pure mapping rules: permission holders, inherited restrictions, GitHub references, watermarks, waits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from connectors.base import PUBLIC, Link, LinkType
from connectors.sources.confluence.mapping import effective_acl
from connectors.sources.github.mapping import references, repo_acl
from connectors.sources.jira.mapping import holder_principals
from connectors.sources.rest import Watermark, retry_after_seconds


@pytest.mark.parametrize(
    ("holder", "principals"),
    [
        ({"type": "anyone"}, {PUBLIC}),
        ({"type": "group", "parameter": "Jira-Users", "value": "g-1"}, {"group:tracker:jira-users"}),
        (
            {"type": "user", "parameter": "acc-1", "user": {"emailAddress": "a@x.io"}},
            {"user:tracker:acc-1", "user:a@x.io"},
        ),
        ({"type": "applicationRole"}, {"group:tracker:app:any"}),
        ({"type": "groupCustomField", "parameter": "customfield_1"}, set()),  # unknown: closed, not open
    ],
    ids=["anyone", "group", "user", "app-role", "unknown"],
)
def test_jira_holders(holder: dict[str, object], principals: set[str]) -> None:
    assert holder_principals(holder, "tracker") == principals  # the source's configured name, not its kind


@pytest.mark.parametrize(
    ("space", "levels", "acl"),
    [
        ({"group:confluence:eng"}, [set(), set()], {"group:confluence:eng"}),
        ({"group:confluence:eng"}, [{"user:ann"}], {"user:ann"}),  # ann reads the space through eng
        ({"group:confluence:eng"}, [{"user:out"}], set()),  # restricted to someone outside the space
        ({PUBLIC}, [{"group:confluence:sec"}], {"group:confluence:sec"}),  # an open space, a closed page
        ({"group:confluence:eng"}, [{"group:confluence:a"}, {"group:confluence:b"}], set()),
    ],
    ids=["unrestricted", "restricted", "outside-the-space", "never-public", "disjoint-levels-mean-nobody"],
)
def test_confluence_effective_acl(space: set[str], levels: list[set[str]], acl: set[str]) -> None:
    members = {"group:confluence:eng": {"user:ann"}}
    assert effective_acl(space, levels, lambda g: members.get(g, set())) == acl


def test_github_references_are_typed() -> None:
    text = "Fixes #3, closes org/Repo#4; duplicate of #9; see #10 and x#11 (not a ref: abc#12x)"
    found = references(text, source="gh", repo="acme/web")
    assert found == [
        Link(target="gh:acme/web#3", type=LinkType.RELATES),
        Link(target="gh:org/repo#4", type=LinkType.RELATES),
        Link(target="gh:acme/web#9", type=LinkType.DUPLICATES),
        Link(target="gh:acme/web#10", type=LinkType.MENTIONS),
    ]


def test_github_private_repo_is_never_public() -> None:
    repo = {"private": True, "visibility": "internal", "owner": {"login": "Acme"}}
    assert repo_acl(repo, [{"login": "Bob"}], [{"slug": "core"}], "gh") == {
        "user:gh:bob",
        "group:gh:acme/core",
        "group:gh:acme",
    }
    assert repo_acl({"private": False, "visibility": "public"}, [], [], "gh") == {PUBLIC}


def test_watermark_skips_only_what_was_processed() -> None:
    t1, t2 = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 2, tzinfo=UTC)
    mark = Watermark()
    mark.advance(t1, "a")
    mark.advance(t2, "b")
    mark.advance(t2, "c")
    again = Watermark.load(mark.dump())
    assert again.seen(t1, "z") and again.seen(t2, "b") and not again.seen(t2, "d")
    assert again.dump() == {"updated": t2.isoformat(), "ids": ["b", "c"]}


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 1970 00:01:40 GMT"}, now=40.0) == 60.0
    assert retry_after_seconds({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "130"}, now=100.0) == 30.0
    assert retry_after_seconds({"x-ratelimit-remaining": "5", "x-ratelimit-reset": "130"}) is None
