"""The Jira connector against the local Jira emulator over real HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from pydantic import SecretStr

from connectors.acl_sync import sync_permissions
from connectors.base import (
    PUBLIC,
    AuthExpired,
    Checkpoint,
    Deleted,
    Failure,
    Link,
    LinkedIdentity,
    LinkType,
    SourceDoc,
    SourceUnavailable,
)
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.jira import JiraConfig, JiraConnector
from connectors.sources.jira.client import JiraClient
from connectors.sources.rest import RetryPolicy
from connectors.sync import sync_source
from tests.integration.connectors.conftest import Drained, SleepLog, drain, pull_until_checkpoint, visible_ids
from tests.servers.jira import EMAIL, TOKEN, FakeJira, jira_time, serve_jira


def _grant(holder: dict[str, Any]) -> dict[str, Any]:
    return {"id": 1, "holder": holder, "permission": "BROWSE_PROJECTS"}


def _link(kind: str, *, inward: str | None = None, outward: str | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"id": "1", "type": {"name": kind, "inward": "in", "outward": "out"}}
    if inward:
        raw["inwardIssue"] = {"key": inward}
    if outward:
        raw["outwardIssue"] = {"key": outward}
    return raw


@pytest.fixture
def fake() -> FakeJira:
    fake = FakeJira(max_page=3)
    fake.schemes["ENG"] = {
        "id": 1,
        "name": "eng",
        "permissions": [
            _grant({"type": "group", "parameter": "jira-software-users", "value": "g-1"}),
            _grant({"type": "projectRole", "parameter": "10002", "value": "10002"}),
            _grant({"type": "reporter"}),
            {"id": 9, "holder": {"type": "anyone"}, "permission": "ADD_COMMENTS"},  # not a browse grant
        ],
    }
    fake.roles[("ENG", "10002")] = {
        "id": 10002,
        "name": "Developers",
        "actors": [
            {"type": "atlassian-group-role-actor", "actorGroup": {"name": "eng-leads", "groupId": "g-2"}},
            {"type": "atlassian-user-role-actor", "actorUser": {"accountId": "acc-ann"}},
        ],
    }
    fake.schemes["PUB"] = {"id": 2, "name": "open", "permissions": [_grant({"type": "anyone"})]}
    fake.security["ENG"] = {"id": 10000, "name": "sec", "levels": [{"id": "10020", "name": "Security team"}]}
    fake.level_members["10000"] = [
        {"id": 1, "issueSecurityLevelId": 10020, "holder": {"type": "group", "parameter": "security-team"}},
        {
            "id": 2,
            "issueSecurityLevelId": 10020,
            "holder": {
                "type": "user",
                "parameter": "acc-sec",
                "user": {"accountId": "acc-sec", "emailAddress": "sec@acme.io"},
            },
        },
        {"id": 3, "issueSecurityLevelId": 10021, "holder": {"type": "group", "parameter": "other-level"}},
    ]
    reporter = {"accountId": "acc-rita", "displayName": "Rita", "emailAddress": "rita@acme.io"}
    fake.add_issue(
        "ENG-1",
        "Checkout times out",
        description="Blocked on PUB-1; runbook https://acme.example.test/wiki/spaces/ENG/pages/123/Runbook",
        issuelinks=[_link("Blocks", outward="ENG-2"), _link("Relates", outward="ENG-3")],
        components=[{"name": "checkout"}],
        labels=["p1"],
        fixVersions=[{"name": "2024.3"}],
        assignee={"accountId": "acc-bob", "displayName": "Bob"},
        reporter=reporter,
    )
    fake.add_issue(
        "ENG-2",
        "Payment gateway retries",
        issuelinks=[_link("Blocks", inward="ENG-1"), _link("Duplicate", outward="ENG-5")],
        parent={"key": "ENG-6"},
    )
    fake.add_issue("ENG-3", "Cache warmup", issuelinks=[_link("Cloners", outward="ENG-6")])
    fake.add_issue("ENG-4", "Leaked key rotation", security={"id": "10020", "name": "Security team"})
    fake.add_issue("ENG-5", "Gateway retry storm")
    fake.add_issue("ENG-6", "Payments epic")
    fake.add_issue("PUB-1", "Public status page")
    for n in range(5):
        fake.add_comment("ENG-1", "Carol", f"comment {n} mentions ENG-5")
    fake.remote_links["ENG-1"] = [
        {
            "id": 1,
            "application": {"type": "com.atlassian.confluence", "name": "Confluence"},
            "object": {
                "url": "https://acme.example.test/wiki/pages/viewpage.action?pageId=77",
                "title": "Deploy runbook",
            },
        },
        {"id": 2, "object": {"url": "https://status.example.com/incident/9", "title": "Incident 9"}},
    ]
    fake.group_members["jira-software-users"] = [
        member("acc-ann"),
        member("acc-sec", "sec@acme.io"),
        member("acc-sam"),
    ]
    fake.group_members["eng-leads"] = [member("acc-ann", "ann@acme.io")]
    fake.group_members["security-team"] = [
        member("acc-sec", "sec@acme.io"),
        member("acc-sam"),
        member("acc-out"),
    ]
    fake.add_comment(
        "ENG-2",
        "Dana",
        "admins only: the gateway key is k-123",
        visibility={"type": "group", "value": "jira-administrators"},
    )
    fake.add_comment("ENG-2", "Sam", "internal note: refund approved", jsdPublic=False)
    fake.add_comment("ENG-2", "Carol", "public retry notes")
    fake.users["user-token"] = {
        "accountId": "acc-ann",
        "emailAddress": "ann@acme.io",
        "groups": {"size": 1, "items": [{"name": "eng-leads", "groupId": "g-2"}]},
        "applicationRoles": {"size": 1, "items": [{"key": "jira-software", "name": "Jira Software"}]},
    }
    return fake


@pytest.fixture
def jira_url(fake: FakeJira) -> Iterator[str]:
    with serve_jira(fake) as url:
        yield url


@pytest.fixture
def config(jira_url: str) -> JiraConfig:
    return JiraConfig(
        base_url=jira_url,
        projects=["ENG", "PUB"],
        email=EMAIL,
        api_token=SecretStr(TOKEN),
        page_size=3,
        confluence_url="https://acme.example.test/wiki",
    )


@pytest.fixture
def connector(config: JiraConfig, sleeps: SleepLog) -> Iterator[JiraConnector]:
    client = JiraClient.from_config(config, name="jira", retry=RetryPolicy(attempts=4), sleep=sleeps)
    with JiraConnector(config, name="jira", client=client) as connector:
        yield connector


def member(account: str, mail: str | None = None) -> dict[str, Any]:
    return {"accountId": account, "active": True} | ({"emailAddress": mail} if mail else {})


def _docs(run: Drained) -> dict[str, SourceDoc]:
    return {doc.id: doc for doc in run.docs}


def test_pages_through_search_and_checkpoints_each_page(connector: JiraConnector, fake: FakeJira) -> None:
    run = drain(connector.pull(None))
    assert sorted(_docs(run)) == [
        "jira:ENG-1",
        "jira:ENG-2",
        "jira:ENG-3",
        "jira:ENG-4",
        "jira:ENG-5",
        "jira:ENG-6",
        "jira:PUB-1",
    ]
    assert len(fake.paths("/rest/api/3/search/jql")) == 3  # 3 + 3 + 1
    assert len(run.checkpoints) == 3
    assert run.cursor == run.checkpoints[-1].cursor
    eng1 = _docs(run)["jira:ENG-1"]
    assert eng1.kind == "ticket" and eng1.url.endswith("/browse/ENG-1")
    assert "comment 4 mentions ENG-5" in eng1.text  # comments past the inline ones were paged in
    assert "Components: checkout" in eng1.text and "Fix versions: 2024.3" in eng1.text
    assert eng1.metadata["comments"] == 5


def test_second_run_fetches_only_changed_issues(connector: JiraConnector, fake: FakeJira) -> None:
    first = drain(connector.pull(None))
    fake.requests.clear()
    fake.touch("ENG-3", summary="Cache warmup (again)")
    fake.add_issue("ENG-7", "New thing")
    second = drain(connector.pull(first.cursor))
    assert sorted(_docs(second)) == ["jira:ENG-3", "jira:ENG-7"]
    search = next(q for _, p, q in fake.requests if p.endswith("/search/jql"))
    # 09:50:31 UTC, less the overlap that catches late-indexed issues, as Berlin (CET) minutes
    assert 'updated >= "2024-03-01 10:40"' in search["jql"][0]
    assert sorted(p for p in fake.paths() if p.endswith("/remotelink")) == [
        "/rest/api/3/issue/ENG-3/remotelink",
        "/rest/api/3/issue/ENG-7/remotelink",
    ]
    third = drain(connector.pull(second.cursor))
    assert third.docs == [] and third.cursor == second.cursor


def test_an_issue_indexed_late_is_not_skipped(connector: JiraConnector, fake: FakeJira) -> None:
    """Jira's search index can lag: an issue updated before the last run's newest one may show up only after
    that run. The next run re-reads an overlap window and takes what it has not seen (at that version)."""
    first = drain(connector.pull(None))
    newest = max(d.updated_at for d in first.docs)
    late = fake.add_issue("ENG-8", "Indexed late")
    late["fields"]["updated"] = jira_time(newest - timedelta(minutes=2))
    second = drain(connector.pull(first.cursor))
    assert sorted(_docs(second)) == ["jira:ENG-8"]
    assert drain(connector.pull(second.cursor)).docs == []


def test_deletion_shows_through_list_ids_only(connector: JiraConnector, fake: FakeJira) -> None:
    first = drain(connector.pull(None))
    assert "jira:ENG-5" in set(connector.list_ids())
    del fake.issues["ENG-5"]
    assert set(connector.list_ids()) == {d.id for d in first.docs} - {"jira:ENG-5"}
    again = drain(connector.pull(first.cursor))
    assert not any(isinstance(item, Deleted) for item in again.items)


def test_rate_limit_retry_after_is_honoured(
    connector: JiraConnector, fake: FakeJira, sleeps: SleepLog
) -> None:
    fake.fail_next(2, status=429, retry_after="0", path="/rest/api/3/search/jql")
    run = drain(connector.pull(None))
    assert len(run.docs) == 7
    assert sleeps.waits == [0.0, 0.0]


def test_server_error_burst_is_survived_and_budget_is_bounded(
    connector: JiraConnector, fake: FakeJira, sleeps: SleepLog
) -> None:
    fake.fail_next(3, status=500, retry_after=None)
    assert len(drain(connector.pull(None)).docs) == 7
    assert sleeps.waits == [0.5, 1.0, 2.0]  # exponential backoff, never slept for real
    fake.fail_next(10, status=503, retry_after=None)
    with pytest.raises(SourceUnavailable):
        drain(connector.pull(None))


def test_malformed_issue_is_a_failure_and_the_run_goes_on(connector: JiraConnector, fake: FakeJira) -> None:
    fake.add_issue("ENG-8", "placeholder")
    fake.issues["ENG-8"]["fields"]["summary"] = {"not": "a string"}
    fake.issues["ENG-8"]["fields"]["issuelinks"] = "garbage"
    run = drain(connector.pull(None))
    assert [f.id for f in run.failures] == ["jira:ENG-8"]
    assert "summary" in run.failures[0].reason and "not" not in run.failures[0].reason.split(": ")[1]
    assert len(run.docs) == 7


def test_crash_after_first_checkpoint_resumes_without_loss_or_duplicates(connector: JiraConnector) -> None:
    seen, saved = pull_until_checkpoint(connector.pull(None))
    resumed = drain(connector.pull(saved))
    ids = seen + [d.id for d in resumed.docs]
    assert len(ids) == len(set(ids)) == 7


def test_acls_follow_project_grants_and_security_levels(connector: JiraConnector) -> None:
    docs = _docs(drain(connector.pull(None)))
    assert docs["jira:PUB-1"].acl == {PUBLIC}
    assert docs["jira:ENG-1"].acl == {
        "group:jira:jira-software-users",
        "group:jira:eng-leads",
        "user:jira:acc-ann",
        "user:jira:acc-rita",  # the reporter, granted by the scheme
        "user:rita@acme.io",
    }
    # The security level narrows Browse: only who passes both (acc-out is in security-team but cannot browse).
    restricted = docs["jira:ENG-4"].acl
    assert restricted == {"user:jira:acc-sec", "user:sec@acme.io", "user:jira:acc-sam"}
    assert PUBLIC not in restricted


def test_restricted_and_internal_comments_are_left_out(connector: JiraConnector) -> None:
    text = _docs(drain(connector.pull(None)))["jira:ENG-2"].text
    assert "public retry notes" in text
    assert "k-123" not in text and "refund approved" not in text


def test_a_token_that_cannot_read_permissions_indexes_nobody_and_says_so(
    connector: JiraConnector, fake: FakeJira
) -> None:
    fake.fail_next(50, status=403, retry_after=None, path="/rest/api/3/project/ENG/permissionscheme")
    run = drain(connector.pull(None))  # the run goes on (PUB is readable)
    docs = _docs(run)
    assert docs["jira:PUB-1"].acl == {PUBLIC}
    assert all(docs[k].acl == frozenset() for k in docs if k.startswith("jira:ENG-"))
    assert [(f.id, f.reason) for f in run.failures] == [
        (
            "jira:ENG",
            "cannot read the permission scheme (HTTP 403): the issues that depend on it are visible to no one",
        )
    ]


def test_a_token_that_cannot_read_security_levels_hides_those_issues(
    connector: JiraConnector, fake: FakeJira
) -> None:
    fake.fail_next(50, status=403, retry_after=None, path="/rest/api/3/project/ENG/issuesecuritylevelscheme")
    run = drain(connector.pull(None))
    docs = _docs(run)
    assert docs["jira:ENG-4"].acl == frozenset() and docs["jira:ENG-1"].acl  # only the secured issue
    assert [f.reason for f in run.failures] == [
        "cannot read a role or security level (HTTP 403): the issues that depend on it are visible to no one"
    ]


def test_principals_of_a_linked_user(connector: JiraConnector) -> None:
    identity = LinkedIdentity(
        source="jira", account="ann@acme.io", access_token="user-token", groups=("extra",)
    )
    principals = connector.principals(identity)
    assert {
        "user:jira:acc-ann",
        "user:ann@acme.io",
        "group:jira:eng-leads",
        "group:jira:extra",
        PUBLIC,
    } <= principals
    assert "group:jira:app:jira-software" in principals
    with pytest.raises(AuthExpired):
        connector.principals(LinkedIdentity(source="jira", account="x", access_token="stale"))


def test_links_are_typed(connector: JiraConnector) -> None:
    docs = _docs(drain(connector.pull(None)))
    eng1 = set(docs["jira:ENG-1"].links)
    assert Link(target="jira:ENG-2", type=LinkType.BLOCKS) in eng1
    assert Link(target="jira:ENG-3", type=LinkType.RELATES) in eng1
    assert Link(target="PUB-1", type=LinkType.MENTIONS, by_name=True) in eng1
    assert Link(target="ENG-5", type=LinkType.MENTIONS, by_name=True) in eng1
    wiki = "https://acme.example.test/wiki/spaces/ENG/pages/123/Runbook"
    assert Link(target=wiki, type=LinkType.LINKS_TO, by_name=True) in eng1
    assert Link(target="Deploy runbook", type=LinkType.LINKS_TO, by_name=True) in eng1
    assert Link(target="https://status.example.com/incident/9", type=LinkType.LINKS_TO, by_name=True) in eng1
    eng2 = set(docs["jira:ENG-2"].links)
    assert Link(target="jira:ENG-5", type=LinkType.DUPLICATES) in eng2
    assert Link(target="jira:ENG-6", type=LinkType.PARENT) in eng2
    assert not any(link.target == "jira:ENG-1" for link in eng2)  # inward "is blocked by" stays with ENG-1
    assert docs["jira:ENG-2"].metadata["inward_links"] == [{"type": "blocks", "from": "ENG-1"}]
    assert Link(target="jira:ENG-6", type=LinkType.CLONES) in set(docs["jira:ENG-3"].links)


def test_bad_service_token_is_auth_expired(config: JiraConfig) -> None:
    bad = config.model_copy(update={"api_token": SecretStr("wrong")})
    with JiraConnector(bad, name="jira") as connector, pytest.raises(AuthExpired) as caught:
        drain(connector.pull(None))
    assert "wrong" not in str(caught.value)


def test_items_are_only_docs_checkpoints_or_failures(connector: JiraConnector) -> None:
    run = drain(connector.pull(None))
    assert all(isinstance(item, SourceDoc | Checkpoint | Failure) for item in run.items)


def test_permission_sync_applies_a_user_removed_from_a_project_role(
    connector: JiraConnector, fake: FakeJira, make_store: Callable[..., KnowledgeStore]
) -> None:
    store = make_store()
    sync_source(store, connector)
    ann, doc = frozenset({PUBLIC, "user:jira:acc-ann"}), "jira:ENG-1"
    assert visible_ids(store, doc, ann, "Checkout times out") == {"document", "bm25", "dense"}

    actors = fake.roles[("ENG", "10002")]["actors"]
    fake.roles[("ENG", "10002")]["actors"] = [a for a in actors if "actorUser" not in a]
    assert sync_source(store, connector).updated == 0  # no issue was updated
    summary = sync_permissions(store, connector)

    assert summary.status == "ok" and summary.changed == 5  # every ENG issue but the secured one
    assert visible_ids(store, doc, ann, "Checkout times out") == set()
    leads = frozenset({PUBLIC, "group:jira:eng-leads"})
    assert visible_ids(store, doc, leads, "Checkout times out") == {"document", "bm25", "dense"}


def test_holders_sleuth_cannot_map_close_a_level_narrow_a_grant_and_are_reported(
    connector: JiraConnector, fake: FakeJira, make_store: Callable[..., KnowledgeStore]
) -> None:
    """A security level member Sleuth cannot express (a custom-field holder) leaves the issue to nobody; a
    Browse grant it cannot express is left out; both are in the sync's failures, which the ledger keeps for
    `sleuth sources failures`, and permission sync applies and reports the same."""
    custom = {"type": "userCustomField", "parameter": "customfield_10050", "value": "customfield_10050"}
    fake.level_members["10000"].append({"id": 4, "issueSecurityLevelId": 10020, "holder": custom})
    fake.schemes["ENG"]["permissions"].append(_grant({"type": "sd.customer.portal.only"}))
    store = make_store()
    summary = sync_source(store, connector)

    assert summary.status == "partial"
    (status,) = store.ledger.status()
    failures = {f["id"]: f["reason"] for f in status["failures"]}
    assert failures == {
        "jira:ENG-4": "restriction entry Sleuth cannot map: visible to no one "
        "(userCustomField holder customfield_10050)",
        "jira:ENG": "permission grant Sleuth cannot map: its holders are not granted through it "
        "(sd.customer.portal.only holder)",
    }
    sec = frozenset({PUBLIC, "user:jira:acc-sec", "user:sec@acme.io", "group:jira:security-team"})
    assert store.acls("jira")["jira:ENG-4"] == frozenset()
    assert visible_ids(store, "jira:ENG-4", sec, "Leaked key rotation") == set()
    ann = frozenset({PUBLIC, "user:jira:acc-ann"})  # the grants Sleuth can map still stand
    assert visible_ids(store, "jira:ENG-1", ann, "Checkout times out") == {"document", "bm25", "dense"}

    fake.level_members["10000"].pop()  # fixed at the source: the next permission sync reopens it
    permissions = sync_permissions(store, connector)
    assert permissions.changed == 1 and store.acls("jira")["jira:ENG-4"] == {
        "user:jira:acc-sec",
        "user:sec@acme.io",
        "user:jira:acc-sam",
    }
    assert [f["id"] for f in permissions.failures] == ["jira:ENG"]
