"""The Confluence connector against the local Confluence emulator over real HTTP."""

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
    SourceDoc,
    SourceUnavailable,
)
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.confluence import ConfluenceConfig, ConfluenceConnector
from connectors.sources.confluence.client import ConfluenceClient
from connectors.sources.rest import RetryPolicy
from connectors.sync import sync_source
from tests.integration.connectors.conftest import Drained, SleepLog, drain, pull_until_checkpoint, visible_ids
from tests.servers.confluence import EMAIL, TOKEN, FakeConfluence, serve_confluence

RUNBOOK = (
    '<h1>Deploy runbook</h1><p>Follow <ac:link><ri:page ri:content-title="Deploy guide"/></ac:link> and '
    'watch <a href="{site}/wiki/spaces/ENG/pages/102/Deploy+guide">the guide</a>.</p>'
    '<ac:structured-macro ac:name="jira"><ac:parameter ac:name="server">System JIRA</ac:parameter>'
    '<ac:parameter ac:name="key">ENG-1</ac:parameter></ac:structured-macro>'
    "<p>Escalate to OPS-7 if it fails.</p>"
)
ALL = ["page-100", "page-101", "page-102", "page-103", "page-104", "page-105", "page-200"]


@pytest.fixture
def fake() -> FakeConfluence:
    fake = FakeConfluence(max_page=3)
    fake.add_space("1", "ENG")
    fake.add_space("2", "OPS")
    fake.add_space("3", "HR")
    fake.groups.update({"g-eng": "engineering", "g-ops": "ops", "g-sec": "security"})
    read = {"key": "read", "targetType": "space"}
    fake.space_permissions["1"] = [
        {"id": "1", "principal": {"type": "group", "id": "g-eng"}, "operation": read},
        {"id": "2", "principal": {"type": "user", "id": "acc-ann"}, "operation": read},
        {
            "id": "3",
            "principal": {"type": "group", "id": "g-ops"},
            "operation": {"key": "delete", "targetType": "page"},
        },
    ]
    fake.space_permissions["2"] = [
        {"id": "4", "principal": {"type": "group", "id": "g-ops"}, "operation": read}
    ]
    fake.add_page("100", "1", "Home", "<p>Welcome</p>")
    fake.add_page("101", "1", "Runbook", "", parent="100")
    fake.add_page(
        "102", "1", "Deploy guide", "<p>Steps</p><ul><li>build</li><li>ship</li></ul>", parent="100"
    )
    fake.add_page("103", "1", "Secrets", "<p>Vault paths</p>", parent="100")
    fake.add_page("104", "1", "Secret child", "<p>Rotation</p>", parent="103")
    fake.add_page("105", "1", "Notes", "<p>Misc</p>")
    fake.add_page("200", "2", "On-call", "<p>Pager</p>")
    fake.add_page("300", "3", "Salaries", "<p>not configured</p>")
    fake.labels["101"] = ["deploy", "runbook"]
    fake.restrictions["103"] = {
        "group": [{"type": "group", "name": "security", "id": "g-sec"}],
        "user": [{"type": "known", "accountId": "acc-sec", "email": "sec@acme.io"}],
    }
    fake.restrictions["104"] = {
        "group": [
            {"type": "group", "name": "security", "id": "g-sec"},
            {"type": "group", "name": "engineering"},
        ],
    }
    sec = {"type": "known", "accountId": "acc-sec", "email": "sec@acme.io"}
    fake.group_members["g-eng"] = [{"type": "known", "accountId": "acc-ann"}, sec]
    fake.group_members["g-sec"] = [sec, {"type": "known", "accountId": "acc-out"}]
    # Paged past the first page: the third user is the one in the space.
    fake.restrictions["105"] = {
        "user": [{"type": "known", "accountId": f"acc-z{n}"} for n in (1, 2)] + [{"accountId": "acc-ann"}]
    }
    fake.users["user-token"] = (
        {"type": "known", "accountId": "acc-ann", "email": "ann@acme.io"},
        [{"type": "group", "name": "engineering", "id": "g-eng"}],
    )
    return fake


@pytest.fixture
def site(fake: FakeConfluence) -> Iterator[str]:
    with serve_confluence(fake) as url:
        fake.pages["101"]["body"]["storage"]["value"] = RUNBOOK.format(site=url)
        yield url


@pytest.fixture
def config(site: str) -> ConfluenceConfig:
    return ConfluenceConfig(
        base_url=site, spaces=["ENG", "OPS"], email=EMAIL, api_token=SecretStr(TOKEN), page_size=3
    )


@pytest.fixture
def connector(config: ConfluenceConfig, sleeps: SleepLog) -> Iterator[ConfluenceConnector]:
    client = ConfluenceClient.from_config(config, name="wiki", retry=RetryPolicy(attempts=4), sleep=sleeps)
    with ConfluenceConnector(config, name="wiki", client=client) as connector:
        yield connector


def _listings(fake: FakeConfluence) -> int:
    return sum(1 for path in fake.paths() if path == "/wiki/api/v2/pages")


def _docs(run: Drained) -> dict[str, SourceDoc]:
    return {doc.id.removeprefix("wiki:"): doc for doc in run.docs}


def test_pages_through_the_listing_newest_first(connector: ConfluenceConnector, fake: FakeConfluence) -> None:
    run = drain(connector.pull(None))
    assert sorted(_docs(run)) == ALL  # the HR space is not configured
    assert _listings(fake) == 3  # 3 + 3 + 1
    assert len(run.checkpoints) == 2  # after each batch that has a next one
    runbook = _docs(run)["page-101"]
    assert runbook.kind == "page" and runbook.version == "1"
    assert runbook.url.endswith("/wiki/spaces/ENG/pages/101/Runbook")
    assert "Deploy runbook" in runbook.text and "System JIRA" not in runbook.text
    assert runbook.metadata["labels"] == ["deploy", "runbook"] and runbook.metadata["space"] == "ENG"
    assert "- build" in _docs(run)["page-102"].text


def test_second_run_fetches_only_changed_pages(connector: ConfluenceConnector, fake: FakeConfluence) -> None:
    first = drain(connector.pull(None))
    fake.requests.clear()
    fake.edit("102", "<p>New steps</p>")
    fake.add_page("106", "2", "Fresh", "<p>new</p>")
    second = drain(connector.pull(first.cursor))
    assert sorted(_docs(second)) == ["page-102", "page-106"]
    assert _docs(second)["page-102"].version == "2"
    assert _listings(fake) == 2  # the new batch, then one to see the mark reached; not the whole space
    assert sorted(p for p in fake.paths() if p.endswith("/labels")) == [
        "/wiki/api/v2/pages/102/labels",
        "/wiki/api/v2/pages/106/labels",
    ]
    assert drain(connector.pull(second.cursor)).docs == []


def test_deletion_shows_through_list_ids_only(connector: ConfluenceConnector, fake: FakeConfluence) -> None:
    first = drain(connector.pull(None))
    del fake.pages["105"]
    assert set(connector.list_ids()) == {d.id for d in first.docs} - {"wiki:page-105"}
    assert not any(isinstance(i, Deleted) for i in drain(connector.pull(first.cursor)).items)


def test_rate_limit_and_server_errors(
    connector: ConfluenceConnector, fake: FakeConfluence, sleeps: SleepLog
) -> None:
    fake.fail_next(2, status=429, retry_after="0", path="/wiki/api/v2/pages")
    fake.fail_next(2, status=502, retry_after=None, path="/wiki/rest/api/content")
    assert len(drain(connector.pull(None)).docs) == 7
    assert sleeps.waits == [0.0, 0.0, 0.5, 1.0]
    fake.fail_next(10, status=500, retry_after=None)
    with pytest.raises(SourceUnavailable):
        drain(connector.pull(None))


def test_malformed_page_is_a_failure_and_the_run_goes_on(
    connector: ConfluenceConnector, fake: FakeConfluence
) -> None:
    fake.add_page("107", "1", "Broken", "<p>x</p>")
    fake.pages["107"]["title"] = None
    run = drain(connector.pull(None))
    assert [(f.id, f.reason) for f in run.failures] == [("wiki:page-107", "malformed page: title")]
    assert len(run.docs) == 7


def test_crash_after_first_checkpoint_resumes_without_loss_or_duplicates(
    connector: ConfluenceConnector,
) -> None:
    seen, saved = pull_until_checkpoint(connector.pull(None))
    resumed = drain(connector.pull(saved))
    ids = seen + [d.id for d in resumed.docs]
    assert len(ids) == len(set(ids)) == 7
    assert drain(connector.pull(resumed.cursor)).docs == []  # the resumed run's cursor covers the whole run


def test_acls_from_space_grants_and_inherited_restrictions(connector: ConfluenceConnector) -> None:
    docs = _docs(drain(connector.pull(None)))
    # Principals carry the source's configured name ("wiki"), as the resolver accepts them from it.
    assert docs["page-102"].acl == {"group:wiki:engineering", "user:wiki:acc-ann"}
    assert docs["page-200"].acl == {"group:wiki:ops"}
    # Restrictions narrow space access: who is restricted-to *and* reads the space (acc-out is in security
    # but not in the space).
    assert docs["page-103"].acl == {"user:wiki:acc-sec", "user:sec@acme.io"}
    assert docs["page-104"].acl == {"user:wiki:acc-sec", "user:sec@acme.io"}  # its own and its parent's
    assert docs["page-105"].acl == {"user:wiki:acc-ann"}  # restriction users listed past the first page
    assert all(PUBLIC not in doc.acl for doc in docs.values())


def test_principals_of_a_linked_user(connector: ConfluenceConnector) -> None:
    identity = LinkedIdentity(source="wiki", account="acc-ann", access_token="user-token")
    assert connector.principals(identity) >= {
        "user:wiki:acc-ann",
        "user:ann@acme.io",
        "group:wiki:engineering",
    }
    with pytest.raises(AuthExpired):
        connector.principals(LinkedIdentity(source="confluence", account="x", access_token="stale"))


def test_links_are_typed(connector: ConfluenceConnector) -> None:
    docs = _docs(drain(connector.pull(None)))
    links = set(docs["page-101"].links)
    assert Link(target="wiki:page-100", type=LinkType.PARENT) in links
    assert Link(target="Deploy guide", type=LinkType.LINKS_TO, by_name=True) in links
    assert Link(target="wiki:page-102", type=LinkType.LINKS_TO) in links
    assert Link(target="ENG-1", type=LinkType.LINKS_TO, by_name=True) in links
    assert Link(target="OPS-7", type=LinkType.MENTIONS, by_name=True) in links
    assert docs["page-104"].metadata["ancestors"] == ["100", "103"]


def test_bad_token_is_auth_expired(config: ConfluenceConfig) -> None:
    bad = config.model_copy(update={"api_token": SecretStr("wrong")})
    with ConfluenceConnector(bad, name="wiki") as connector, pytest.raises(AuthExpired):
        drain(connector.pull(None))


def test_permission_sync_applies_a_restriction_added_to_a_page(
    connector: ConfluenceConnector, fake: FakeConfluence, make_store: Callable[..., KnowledgeStore]
) -> None:
    store = make_store()
    sync_source(store, connector)
    ann, doc = frozenset({PUBLIC, "user:wiki:acc-ann", "group:wiki:engineering"}), "wiki:page-102"
    assert visible_ids(store, doc, ann, "Deploy guide steps") == {"document", "bm25", "dense"}

    fake.restrictions["102"] = {"group": [{"type": "group", "name": "security", "id": "g-sec"}]}
    assert sync_source(store, connector).updated == 0  # the page itself did not change
    summary = sync_permissions(store, connector)

    assert summary.status == "ok" and summary.changed == 1
    assert visible_ids(store, doc, ann, "Deploy guide steps") == set()
    security = frozenset({PUBLIC, "group:wiki:security"})  # security-only: no read access to the space
    assert visible_ids(store, doc, security, "Deploy guide steps") == set()
    sec = frozenset({PUBLIC, "user:wiki:acc-sec"})  # in both
    assert visible_ids(store, doc, sec, "Deploy guide steps") == {"document", "bm25", "dense"}


def test_restrictions_sleuth_cannot_map_leave_the_page_to_nobody_and_are_reported(
    connector: ConfluenceConnector, fake: FakeConfluence, make_store: Callable[..., KnowledgeStore]
) -> None:
    """A read restriction naming a user of type `unknown`, or a group by an id Confluence gives no name for,
    used to be dropped, opening the page to the whole space. Now the page is visible to no one and the sync
    says which entry did it; a group given by an id the site can name is that group."""
    fake.add_page("106", "1", "Board minutes", "<p>Sponsor: Quentin</p>")
    fake.add_page("107", "1", "Acquisition", "<p>Target: Lumen</p>")
    fake.add_page("108", "1", "Eng only", "<p>Build farm</p>")
    fake.restrictions["106"] = {"user": [{"type": "unknown", "displayName": "Unknown user"}]}
    fake.restrictions["107"] = {"group": [{"type": "group", "id": "g-board"}]}  # no name at /group/by-id
    fake.restrictions["108"] = {"group": [{"type": "group", "id": "g-eng"}]}  # named by /group/by-id
    store = make_store()
    summary = sync_source(store, connector)

    acls = store.acls("wiki")
    assert acls["wiki:page-106"] == acls["wiki:page-107"] == frozenset()
    assert "group:wiki:engineering" in acls["wiki:page-108"]  # with the members who reach both checks
    ann = frozenset({PUBLIC, "user:wiki:acc-ann", "group:wiki:engineering"})  # reads the whole space
    assert visible_ids(store, "wiki:page-106", ann, "Board minutes sponsor") == set()
    assert visible_ids(store, "wiki:page-107", ann, "Acquisition target") == set()
    assert visible_ids(store, "wiki:page-108", ann, "Eng only build farm") == {"document", "bm25", "dense"}
    reason = "restriction entry Sleuth cannot map: visible to no one"
    assert summary.status == "partial"
    (status,) = store.ledger.status()  # what `sleuth sources failures wiki` prints
    assert {f["id"]: f["reason"] for f in status["failures"]} == {
        "wiki:page-106": f"{reason} (user of type unknown)",
        "wiki:page-107": f"{reason} (group given by id only (g-board))",
    }

    # Permission sync: a restriction that becomes unmappable after the last content sync closes the page too.
    fake.restrictions["102"] = {"user": [{"type": "anonymous"}]}
    permissions = sync_permissions(store, connector)
    assert permissions.changed == 1 and store.acls("wiki")["wiki:page-102"] == frozenset()
    assert "wiki:page-102" in {f["id"] for f in store.ledger.status()[0]["failures"]}
