from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from bot.identity import LinkProblem, PrincipalResolver
from connectors.base import PUBLIC, AuthExpired, LinkedIdentity, SourceUnavailable

ANN = LinkedIdentity(source="acme", account="ann@acme.io", access_token="tok", groups=("eng",))
EXPIRED = LinkProblem("acme", "Your Acme link expired — run `/sleuth link acme` to reconnect.")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeLinks:
    """Records calls; plays AccountLinker's part."""

    found: list[LinkedIdentity] = field(default_factory=list)
    problems: list[LinkProblem] = field(default_factory=list)
    calls: int = 0
    expired: list[str] = field(default_factory=list)
    listeners: list[Callable[[str, str], None]] = field(default_factory=list)

    def identities(self, team: str, user: str) -> tuple[list[LinkedIdentity], list[LinkProblem]]:
        self.calls += 1
        return list(self.found), list(self.problems)

    def mark_expired(self, team: str, user: str, source: str) -> LinkProblem:
        self.expired.append(source)
        return EXPIRED

    def on_change(self, listener: Callable[[str, str], None]) -> None:
        self.listeners.append(listener)

    def change(self, team: str, user: str) -> None:
        for listener in self.listeners:
            listener(team, user)


def groups_of(source: str, identity: LinkedIdentity) -> set[str]:
    return {f"group:{source}:{g}" for g in identity.groups}


@pytest.mark.parametrize(
    ("email", "found", "expected"),
    [
        (None, [], {PUBLIC}),
        ("Ann@Acme.io ", [], {PUBLIC, "user:ann@acme.io"}),
        ("ann@acme.io", [ANN], {PUBLIC, "user:ann@acme.io", "group:acme:eng"}),
        (None, [ANN], {PUBLIC, "group:acme:eng"}),
    ],
    ids=["anonymous", "email-only", "linked", "linked-no-email"],
)
def test_resolve(email: str | None, found: list[LinkedIdentity], expected: set[str]) -> None:
    resolver = PrincipalResolver(FakeLinks(found=found), groups_of, clock=Clock())
    resolved = resolver.resolve("T1", "U1", email)
    assert resolved.principals == frozenset(expected)
    assert resolved.problems == []


def test_connectors_cannot_grant_public_or_other_sources_groups() -> None:
    def greedy(source: str, identity: LinkedIdentity) -> set[str]:
        return {PUBLIC, "group:wiki:admins", "group:acme:eng", "user:ann@acme.io", "admin"}

    resolved = PrincipalResolver(FakeLinks(found=[ANN]), greedy, clock=Clock()).resolve("T1", "U1", None)
    assert resolved.principals == {PUBLIC, "group:acme:eng"}


def test_each_source_grants_only_its_own_namespace() -> None:
    """A GitHub login named like someone's Atlassian account id claims nothing of theirs, and a source may add
    an email principal only when it is the asker's own Slack-verified email."""
    gh = LinkedIdentity(source="gh", account="5b10ac8d82e05b22", email="mal@acme.io", groups=("acme/eng",))

    def say_anything(source: str, identity: LinkedIdentity) -> set[str]:
        return {
            "user:5b10ac8d82e05b22",  # un-namespaced account id: shared by every source, so refused
            "user:jira:5b10ac8d82e05b22",  # another source's account
            "user:gh:5b10ac8d82e05b22",  # its own
            "user:dana@acme.io",  # an email Slack did not verify for this asker
            "user:mal@acme.io",
            "group:gh:acme/eng",
            "group:jira:admins",
        }

    resolver = PrincipalResolver(FakeLinks(found=[gh]), say_anything, clock=Clock())
    resolved = resolver.resolve("T1", "U_MAL", "Mal@acme.io")
    assert resolved.principals == {
        PUBLIC,
        "user:mal@acme.io",
        "user:gh:5b10ac8d82e05b22",
        "group:gh:acme/eng",
    }


def test_nothing_but_team_user_and_email_goes_in() -> None:
    assert list(inspect.signature(PrincipalResolver.resolve).parameters) == ["self", "team", "user", "email"]


def test_results_are_cached_for_the_ttl() -> None:
    links, clock = FakeLinks(found=[ANN]), Clock()
    resolver = PrincipalResolver(links, groups_of, ttl_s=60, clock=clock)
    first = resolver.resolve("T1", "U1", "ann@acme.io")
    clock.now = 59
    assert resolver.resolve("T1", "U1", "ann@acme.io") == first
    assert links.calls == 1
    clock.now = 60
    resolver.resolve("T1", "U1", "ann@acme.io")
    assert links.calls == 2
    resolver.resolve("T1", "U2", "bob@acme.io")  # another user, another entry
    assert links.calls == 3


def test_a_link_change_drops_the_users_cache_entries_only() -> None:
    links, clock = FakeLinks(found=[ANN]), Clock()
    resolver = PrincipalResolver(links, groups_of, ttl_s=60, clock=clock)
    resolver.resolve("T1", "U1", "ann@acme.io")
    resolver.resolve("T1", "U2", "bob@acme.io")

    links.found = []
    links.change("T1", "U1")  # unlink / relink

    assert resolver.resolve("T1", "U1", "ann@acme.io").principals == {PUBLIC, "user:ann@acme.io"}
    assert "group:acme:eng" in resolver.resolve("T1", "U2", "bob@acme.io").principals  # still cached
    assert links.calls == 3


def test_link_problems_pass_through() -> None:
    links = FakeLinks(problems=[EXPIRED])
    resolved = PrincipalResolver(links, groups_of, clock=Clock()).resolve("T1", "U1", "ann@acme.io")
    assert resolved.principals == {PUBLIC, "user:ann@acme.io"}
    assert resolved.problems == [EXPIRED]


def test_connector_saying_auth_expired_marks_the_link_expired() -> None:
    def expired(source: str, identity: LinkedIdentity) -> set[str]:
        raise AuthExpired("401 from acme")

    links = FakeLinks(found=[ANN])
    resolved = PrincipalResolver(links, expired, clock=Clock()).resolve("T1", "U1", "ann@acme.io")
    assert resolved.principals == {PUBLIC, "user:ann@acme.io"}
    assert resolved.problems == [EXPIRED]
    assert links.expired == ["acme"]


def test_connector_unavailable_is_a_problem_not_an_error() -> None:
    def down(source: str, identity: LinkedIdentity) -> set[str]:
        raise SourceUnavailable("503")

    links = FakeLinks(found=[ANN])
    resolved = PrincipalResolver(links, down, clock=Clock()).resolve("T1", "U1", None)
    assert resolved.principals == {PUBLIC}
    assert [p.source for p in resolved.problems] == ["acme"]
    assert links.expired == []


def test_resolved_holds_no_token() -> None:
    resolved = PrincipalResolver(FakeLinks(found=[ANN]), groups_of, clock=Clock()).resolve("T1", "U1", None)
    assert "tok" not in repr(resolved)
    assert "tok" not in repr(ANN)
