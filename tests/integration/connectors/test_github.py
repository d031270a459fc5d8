"""The GitHub connector against the local GitHub emulator over real HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from pydantic import SecretStr

from connectors.acl_sync import sync_permissions
from connectors.base import (
    PUBLIC,
    AuthExpired,
    Deleted,
    Link,
    LinkedIdentity,
    LinkType,
    RateLimited,
    SourceDoc,
    SourceUnavailable,
)
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.github import GitHubConfig, GitHubConnector
from connectors.sources.github.client import GitHubClient
from connectors.sources.rest import RetryPolicy
from connectors.sync import sync_source
from tests.integration.connectors.conftest import Drained, SleepLog, drain, pull_until_checkpoint, visible_ids
from tests.servers.github import TOKEN, FakeGitHub, Fault, serve_github

SHA = "a" * 40
WEB = [f"acme/web#{n}" for n in range(1, 7)]
ALL = sorted([*WEB, "acme/secret#1", "acme/secret#2"])


@pytest.fixture
def fake() -> FakeGitHub:
    fake = FakeGitHub(max_page=2)
    fake.add_repo("acme/web")
    secret = fake.add_repo("acme/secret", private=True)
    secret.collaborators = [{"login": "Alice", "permissions": {"pull": True}}]
    secret.teams = [{"slug": "core", "name": "Core", "permission": "pull"}]
    fake.add_issue("acme/web", 1, "Checkout slow", "Users wait 10s", labels=[{"name": "bug"}])
    fake.add_issue("acme/web", 2, "Checkout is slow", "Duplicate of #1. See acme/secret#1 and ENG-9.")
    fake.add_issue("acme/web", 3, "Cache misses", "")
    fake.add_issue("acme/web", 4, "Metrics", "")
    fake.add_issue("acme/web", 5, "Docs", "")
    fake.add_issue(
        "acme/web",
        6,
        "Speed up checkout",
        "Closes #3, fixes acme/web#4. See https://github.com/acme/web/issues/5",
        pull=True,
    )
    fake.repos["acme/web"].commits[6] = [{"sha": SHA, "commit": {"message": "Speed up checkout\n\nDetails"}}]
    for n in range(3):
        fake.add_comment("acme/web", 1, "bob", f"comment {n}")
    fake.add_issue("acme/secret", 1, "Rotate keys", "")
    fake.add_issue("acme/secret", 2, "Audit", "")
    fake.users["user-token"] = (
        {"login": "Alice"},
        [{"slug": "core", "organization": {"login": "acme"}}],
        [{"login": "acme"}],
    )
    return fake


@pytest.fixture
def api(fake: FakeGitHub) -> Iterator[str]:
    with serve_github(fake) as url:
        yield url


@pytest.fixture
def config(api: str) -> GitHubConfig:
    return GitHubConfig(
        base_url=api,
        repos=["acme/web", "Acme/Secret"],
        token=SecretStr(TOKEN),
        page_size=2,
        include_pr_commits=True,
    )


@pytest.fixture
def connector(config: GitHubConfig, sleeps: SleepLog) -> Iterator[GitHubConnector]:
    client = GitHubClient.from_config(config, name="gh", retry=RetryPolicy(attempts=4), sleep=sleeps)
    with GitHubConnector(config, name="gh", client=client) as connector:
        yield connector


def _docs(run: Drained) -> dict[str, SourceDoc]:
    return {doc.id.removeprefix("gh:"): doc for doc in run.docs}


def test_pages_through_issues_and_pull_requests(connector: GitHubConnector, fake: FakeGitHub) -> None:
    run = drain(connector.pull(None))
    docs = _docs(run)
    assert sorted(docs) == ALL
    assert len(fake.paths("/repos/acme/web/issues")) - len(fake.paths("/repos/acme/web/issues/")) == 3
    assert len(run.checkpoints) == 4  # 3 pages of acme/web, 1 of acme/secret
    assert docs["acme/web#6"].kind == "pull_request" and docs["acme/web#1"].kind == "issue"
    assert "comment 2" in docs["acme/web#1"].text  # comments paged past the first page
    assert docs["acme/web#1"].metadata["labels"] == ["bug"]
    assert docs["acme/web#6"].metadata["commits"] == [SHA]
    assert docs["acme/web#6"].url == "https://github.com/acme/web/pull/6"


def test_second_run_fetches_only_changed_issues(connector: GitHubConnector, fake: FakeGitHub) -> None:
    first = drain(connector.pull(None))
    fake.requests.clear()
    fake.touch("acme/web", 3, state="closed")
    fake.add_issue("acme/secret", 3, "New secret thing")
    second = drain(connector.pull(first.cursor))
    assert sorted(_docs(second)) == ["acme/secret#3", "acme/web#3"]
    listings = [q for _, p, q in fake.requests if p.endswith("/issues")]
    assert all("since" in q for q in listings)
    assert not [p for p in fake.paths() if p.endswith("/comments")]  # #1's comments were not read again
    assert drain(connector.pull(second.cursor)).docs == []


def test_deletion_shows_through_list_ids_only(connector: GitHubConnector, fake: FakeGitHub) -> None:
    first = drain(connector.pull(None))
    del fake.repos["acme/web"].issues[5]
    assert set(connector.list_ids()) == {d.id for d in first.docs} - {"gh:acme/web#5"}
    assert not any(isinstance(i, Deleted) for i in drain(connector.pull(first.cursor)).items)


def test_rate_limits_are_honoured(connector: GitHubConnector, fake: FakeGitHub, sleeps: SleepLog) -> None:
    fake.fail_next(1, status=429, retry_after="0")
    fake.faults.append(
        Fault(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"}, None)
    )  # primary limit
    assert len(drain(connector.pull(None)).docs) == 8
    assert sleeps.waits == [0.0, 0.0]


SECONDARY = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."


def test_secondary_rate_limit_waits_at_least_a_minute(
    connector: GitHubConnector, fake: FakeGitHub, sleeps: SleepLog
) -> None:
    """A 403 that names a secondary rate limit, without Retry-After: wait >= 60 s (here: longer than a sync
    sits out, so the run stops and says when to try again), never a tight retry, never "refused access"."""
    fake.faults.append(Fault(403, {}, None, SECONDARY))
    with pytest.raises(RateLimited) as limited:
        drain(connector.pull(None))
    assert limited.value.retry_after is not None and limited.value.retry_after >= 60
    assert sleeps.waits == []
    fake.faults.append(Fault(403, {"retry-after": "3"}, None, SECONDARY))  # told how long: honoured
    assert len(drain(connector.pull(None)).docs) == 8
    assert sleeps.waits == [3.0]


def test_server_error_burst_is_survived(
    connector: GitHubConnector, fake: FakeGitHub, sleeps: SleepLog
) -> None:
    fake.fail_next(3, status=502, retry_after=None, path="/repos/acme/web/issues")
    assert len(drain(connector.pull(None)).docs) == 8
    assert sleeps.waits == [0.5, 1.0, 2.0]
    fake.fail_next(4, status=500, retry_after=None)
    with pytest.raises(SourceUnavailable):
        drain(connector.pull(None))


def test_malformed_issue_is_a_failure_and_the_run_goes_on(
    connector: GitHubConnector, fake: FakeGitHub
) -> None:
    fake.add_issue("acme/web", 7, "Broken")
    fake.repos["acme/web"].issues[7]["title"] = ["not", "a", "string"]
    run = drain(connector.pull(None))
    assert [(f.id, f.reason) for f in run.failures] == [("gh:acme/web#7", "malformed issue: title")]
    assert len(run.docs) == 8


def test_crash_after_first_checkpoint_resumes_without_loss_or_duplicates(connector: GitHubConnector) -> None:
    seen, saved = pull_until_checkpoint(connector.pull(None))
    resumed = drain(connector.pull(saved))
    ids = seen + [d.id for d in resumed.docs]
    assert len(ids) == len(set(ids)) == 8


def test_acls_follow_repository_visibility(connector: GitHubConnector) -> None:
    docs = _docs(drain(connector.pull(None)))
    assert docs["acme/web#1"].acl == {PUBLIC}
    assert docs["acme/secret#1"].acl == {"user:gh:alice", "group:gh:acme/core"}


def test_principals_of_a_linked_user(connector: GitHubConnector) -> None:
    identity = LinkedIdentity(source="gh", account="alice", access_token="user-token")
    principals = connector.principals(identity)
    assert {"user:gh:alice", "group:gh:acme/core", "group:gh:acme", PUBLIC} <= principals
    secret = _docs(drain(connector.pull(None)))["acme/secret#1"]
    assert secret.acl & principals
    with pytest.raises(AuthExpired):
        connector.principals(LinkedIdentity(source="github", account="x", access_token="stale"))


def test_links_are_typed(connector: GitHubConnector) -> None:
    docs = _docs(drain(connector.pull(None)))
    assert set(docs["acme/web#2"].links) == {
        Link(target="gh:acme/web#1", type=LinkType.DUPLICATES),
        Link(target="gh:acme/secret#1", type=LinkType.MENTIONS),
        Link(target="ENG-9", type=LinkType.MENTIONS, by_name=True),
    }
    assert set(docs["acme/web#6"].links) == {
        Link(target="gh:acme/web#3", type=LinkType.RELATES),
        Link(target="gh:acme/web#4", type=LinkType.RELATES),
        Link(target="gh:acme/web#5", type=LinkType.MENTIONS),
    }


def test_bad_token_is_auth_expired(config: GitHubConfig) -> None:
    bad = config.model_copy(update={"token": SecretStr("wrong")})
    with GitHubConnector(bad, name="gh") as connector, pytest.raises(AuthExpired):
        drain(connector.pull(None))


def test_permission_sync_follows_a_repository_made_private_and_public_again(
    connector: GitHubConnector, fake: FakeGitHub, make_store: Callable[..., KnowledgeStore]
) -> None:
    store = make_store()
    sync_source(store, connector)
    outsider, doc = frozenset({PUBLIC}), "gh:acme/web#1"
    assert visible_ids(store, doc, outsider, "Checkout slow") == {"document", "bm25", "dense"}

    fake.repos["acme/web"].meta |= {"private": True, "visibility": "private"}  # no issue changes
    assert sync_source(store, connector).updated == 0  # content sync sees nothing new
    summary = sync_permissions(store, connector)

    assert summary.status == "ok" and summary.changed == 6 and summary.checked == 8
    assert visible_ids(store, doc, outsider, "Checkout slow") == set()
    assert store.stats()["chunks"] == store.vectors.count()  # nothing re-embedded or lost

    fake.repos["acme/web"].meta |= {"private": False, "visibility": "public"}
    assert sync_permissions(store, connector).changed == 6
    assert visible_ids(store, doc, outsider, "Checkout slow") == {"document", "bm25", "dense"}


def test_a_collaborator_sleuth_cannot_map_hides_the_repository_and_is_reported(
    connector: GitHubConnector, fake: FakeGitHub, make_store: Callable[..., KnowledgeStore]
) -> None:
    fake.repos["acme/secret"].collaborators.append({"id": 99, "type": "User", "permissions": {"pull": True}})
    store = make_store()
    summary = sync_source(store, connector)

    assert summary.status == "partial"
    assert {f["id"]: f["reason"] for f in store.ledger.status()[0]["failures"]} == {
        "gh:acme/secret": "restriction entry Sleuth cannot map: visible to no one (collaborator without a login)"
    }
    alice = frozenset({PUBLIC, "user:gh:alice", "group:gh:acme/core"})
    assert visible_ids(store, "gh:acme/secret#1", alice, "Rotate keys") == set()
    assert visible_ids(store, "gh:acme/web#1", frozenset({PUBLIC}), "Checkout slow") == {
        "document",
        "bm25",
        "dense",
    }

    fake.repos["acme/secret"].collaborators.pop()
    assert sync_permissions(store, connector).changed == 2
    assert visible_ids(store, "gh:acme/secret#1", alice, "Rotate keys") == {"document", "bm25", "dense"}
