"""The live access check against the local Confluence, Jira and GitHub servers over real HTTP: a permission
revoked at the source after the last sync removes the cited document from the next answer, with no sync in
between; a check that cannot complete hides the document and says so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from bot.render import render_answer
from connectors.base import LinkedIdentity
from connectors.knowledge.store import KnowledgeStore
from connectors.live_access import GONE, OPEN, SYNCED, UNCONFIRMED, LiveCheck, LiveCheckConfig
from connectors.sources.confluence import ConfluenceConfig, ConfluenceConnector
from connectors.sources.github import GitHubConfig, GitHubConnector
from connectors.sources.jira import JiraConfig, JiraConnector
from connectors.sync import sync_source
from graph_flows.config import FlowConfig
from graph_flows.flow import Investigator, build_flow
from graph_flows.reasoners.offline import OfflineReasoner
from tests.servers import confluence as wiki
from tests.servers import github as gh
from tests.servers import jira

VAULT = "wiki:page-110"
ANN = (
    {"type": "known", "accountId": "acc-ann", "email": "ann@acme.io"},
    [{"name": "engineering", "id": "g-eng"}],
)
QUESTION = "How often do the production vault keys rotate?"


@pytest.fixture
def fake_wiki() -> wiki.FakeConfluence:
    fake = wiki.FakeConfluence()
    fake.add_space("1", "ENG")
    fake.groups["g-eng"] = "engineering"
    read = {"key": "read", "targetType": "space"}
    fake.space_permissions["1"] = [
        {"id": "1", "principal": {"type": "group", "id": "g-eng"}, "operation": read},
    ]
    fake.add_page("100", "1", "Home", "<p>Welcome to engineering.</p>")
    fake.add_page(
        "110", "1", "Vault rotation", "<p>The production vault keys rotate every 45 days, on a Monday.</p>"
    )
    fake.add_page("120", "1", "Rotation owners", "<p>The security team owns vault key rotation.</p>")
    ann = {"type": "known", "accountId": "acc-ann", "email": "ann@acme.io"}
    sec = {"type": "known", "accountId": "acc-sec", "email": "sec@acme.io"}
    fake.restrictions["110"] = {"user": [ann, sec]}
    fake.group_members["g-eng"] = [ann, sec]
    fake.users["ann-token"] = ANN
    return fake


@pytest.fixture
def confluence(fake_wiki: wiki.FakeConfluence) -> Iterator[ConfluenceConnector]:
    with wiki.serve_confluence(fake_wiki) as url:
        config = ConfluenceConfig(
            base_url=url, spaces=["ENG"], email=wiki.EMAIL, api_token=SecretStr(wiki.TOKEN)
        )
        with ConfluenceConnector(config, name="wiki") as connector:
            yield connector


@pytest.fixture
def synced(make_store: Callable[[], KnowledgeStore], confluence: ConfluenceConnector) -> KnowledgeStore:
    store = make_store()
    assert sync_source(store, confluence).failed == 0
    return store


def _ann(connector: ConfluenceConnector) -> frozenset[str]:
    return frozenset(
        connector.principals(LinkedIdentity(source="wiki", account="acc-ann", access_token="ann-token"))
    )


def _ask(store: KnowledgeStore, principals: frozenset[str], check: LiveCheck, thread: str) -> dict[str, Any]:
    settings = FlowConfig()
    flow = build_flow(store, OfflineReasoner(), settings, checkpointer=InMemorySaver())
    out = Investigator(flow=flow, flow_settings=settings).ask(
        thread, QUESTION, asker="ann@acme.io", principals=principals, access=check
    )
    return dict(out)


def _shown(out: dict[str, Any]) -> set[str]:
    return {s["doc_id"] for s in out["answer"]["sources"]}


def test_a_permission_revoked_at_confluence_after_the_sync_removes_the_page_from_the_next_answer(
    synced: KnowledgeStore, confluence: ConfluenceConnector, fake_wiki: wiki.FakeConfluence
) -> None:
    ann = _ann(confluence)
    check = LiveCheck({"wiki": confluence}.get, lambda: {"wiki": "ann-token"})
    before = _ask(synced, ann, check, "T:C:before")
    assert VAULT in _shown(before) and "45 days" in before["answer"]["text"]
    fake_wiki.restrictions["110"]["user"] = [
        u for u in fake_wiki.restrictions["110"]["user"] if u["accountId"] != "acc-ann"
    ]
    fake_wiki.requests.clear()
    after = _ask(synced, ann, check, "T:C:after")
    assert synced.document(VAULT, ann) is not None  # no sync in between: the store still says she may
    assert VAULT not in _shown(after) and "45 days" not in after["answer"]["text"]
    assert "/wiki/api/v2/pages/110" in fake_wiki.paths()  # asked of Confluence, with her token
    assert after["trace"][-1]["access"]["gone"] == 1 and after["trace"][-1]["access"]["compositions"] >= 2
    assert "unconfirmed" not in after["answer"]  # "not yours" reads as "not found"


@pytest.mark.parametrize("failure", ["server-error", "no-linked-token"])
def test_a_check_that_cannot_complete_hides_the_page_and_says_so(
    synced: KnowledgeStore, confluence: ConfluenceConnector, fake_wiki: wiki.FakeConfluence, failure: str
) -> None:
    tokens = {"wiki": "ann-token"} if failure == "server-error" else {}
    if failure == "server-error":
        fake_wiki.fail_next(5, status=503, path="/wiki/api/v2/pages/110")
    out = _ask(
        synced, _ann(confluence), LiveCheck({"wiki": confluence}.get, lambda: tokens), f"T:C:{failure}"
    )
    assert VAULT not in _shown(out) and "45 days" not in out["answer"]["text"]
    assert out["answer"]["unconfirmed"] >= 1
    blocks = str(render_answer(out["answer"], trace_id="t"))
    assert "Couldn't confirm access to" in blocks and ": not shown." in blocks


def test_an_unlinked_source_may_be_trusted_on_its_synced_acl_when_configured(
    synced: KnowledgeStore, confluence: ConfluenceConnector
) -> None:
    check = LiveCheck({"wiki": confluence}.get, dict, LiveCheckConfig(unlinked="synced"))
    assert VAULT in _shown(_ask(synced, _ann(confluence), check, "T:C:trusted"))


class _Stalled:
    """A source that never answers in time (a seam: the deadline is LiveCheck's, not the HTTP client's)."""

    name = "slow"

    def __init__(self) -> None:
        self.release = threading.Event()

    def can_open(self, doc_id: str, access_token: str, *, timeout_s: float) -> bool:
        self.release.wait(10)
        return True


def test_the_deadline_bounds_the_whole_check_and_late_answers_are_unconfirmed() -> None:
    slow = _Stalled()
    check = LiveCheck({"slow": slow}.get, lambda: {"slow": "t"}, LiveCheckConfig(deadline_s=0.3))
    started = time.monotonic()
    try:
        verdicts = check([f"slow:{n}" for n in range(20)] + ["folder:x"])
    finally:
        slow.release.set()
    assert time.monotonic() - started < 2.0
    assert verdicts == {**{f"slow:{n}": UNCONFIRMED for n in range(20)}, "folder:x": SYNCED}


# --- every source's own check, table-driven over what its API answers ---


@pytest.fixture
def fake_jira() -> jira.FakeJira:
    fake = jira.FakeJira()
    fake.add_issue("ENG-1", "Vault rotation")
    fake.users["ann-token"] = {"accountId": "acc-ann", "emailAddress": "ann@acme.io"}
    return fake


@pytest.fixture
def fake_github() -> gh.FakeGitHub:
    fake = gh.FakeGitHub()
    fake.add_repo("acme/vault", private=True)
    fake.add_issue("acme/vault", 7, "Vault rotation")
    fake.repos["acme/vault"].collaborators = [{"login": "ann"}]
    fake.users["ann-token"] = ({"login": "ann", "id": 1}, [], [])
    return fake


def _confluence_case(fake: wiki.FakeConfluence, url: str, how: str) -> tuple[Any, str]:
    if how == "revoked":
        fake.restrictions["110"]["user"] = [
            u for u in fake.restrictions["110"]["user"] if u["accountId"] != "acc-ann"
        ]
    if how == "failing":
        fake.fail_next(1, status=503, path="/wiki/api/v2/pages/")
    config = ConfluenceConfig(base_url=url, spaces=["ENG"], email=wiki.EMAIL, api_token=SecretStr(wiki.TOKEN))
    return ConfluenceConnector(config, name="wiki"), "wiki:page-110"


def _jira_case(fake: jira.FakeJira, url: str, how: str) -> tuple[Any, str]:
    if how == "revoked":
        fake.browsers["ENG-1"] = {"acc-sec"}
    if how == "failing":
        fake.fail_next(1, status=502, path="/rest/api/3/issue/")
    config = JiraConfig(base_url=url, projects=["ENG"], email=jira.EMAIL, api_token=SecretStr(jira.TOKEN))
    return JiraConnector(config, name="jira"), "jira:ENG-1"


def _github_case(fake: gh.FakeGitHub, url: str, how: str) -> tuple[Any, str]:
    if how == "revoked":
        fake.repos["acme/vault"].collaborators = []
    if how == "failing":
        fake.fail_next(1, status=500, path="/repos/acme/vault/issues/")
    return GitHubConnector(
        GitHubConfig(base_url=url, repos=["acme/vault"], token=SecretStr(gh.TOKEN)), name="gh"
    ), "gh:acme/vault#7"


@pytest.mark.parametrize("how", ["open", "revoked", "failing", "bad-token"])
@pytest.mark.parametrize("kind", ["confluence", "jira", "github"])
def test_each_source_answers_the_live_check_with_the_users_own_token(
    kind: str, how: str, fake_wiki: wiki.FakeConfluence, fake_jira: jira.FakeJira, fake_github: gh.FakeGitHub
) -> None:
    serve, fake, case = {
        "confluence": (wiki.serve_confluence, fake_wiki, _confluence_case),
        "jira": (jira.serve_jira, fake_jira, _jira_case),
        "github": (gh.serve_github, fake_github, _github_case),
    }[kind]
    with serve(fake) as url:  # type: ignore[operator]
        connector, doc_id = case(fake, url, how)  # type: ignore[operator]
        token = "stale-token" if how == "bad-token" else "ann-token"
        with connector:
            verdicts = LiveCheck({connector.name: connector}.get, lambda: {connector.name: token})([doc_id])
    expected = {"open": OPEN, "revoked": GONE, "failing": UNCONFIRMED, "bad-token": UNCONFIRMED}[how]
    assert verdicts == {doc_id: expected}
