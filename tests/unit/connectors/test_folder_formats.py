"""The folder source on what teams have: a folder of markdown pages and tickets with a people file
(tests/fixtures/team), Jira's CSV export and Confluence's HTML space export (tests/fixtures/exports)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from connectors.base import Failure, LinkedIdentity, LinkType, Skipped, SourceDoc
from connectors.knowledge.chunking import chunk_texts
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.folder import FolderConfig, FolderConnector
from connectors.sources.folder.markdown import split_comments
from connectors.sync import sync_source

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TEAM = FIXTURES / "team"
JIRA = FIXTURES / "exports" / "jira"
CONFLUENCE = FIXTURES / "exports" / "confluence"


def _pull(path: Path, name: str) -> list[object]:
    return _pull_with(FolderConnector(FolderConfig(path=path), name=name))


def _pull_with(connector: FolderConnector) -> list[object]:
    pulled = connector.pull(None)
    items = []
    while True:
        try:
            items.append(next(pulled))
        except StopIteration:
            return items


def _docs(items: list[object]) -> dict[str, SourceDoc]:
    return {i.id: i for i in items if isinstance(i, SourceDoc)}


def _links(doc: SourceDoc) -> set[tuple[str, LinkType]]:
    return {(link.target, link.type) for link in doc.links}


def test_the_team_folder_loads_with_no_failures_and_nothing_skipped() -> None:
    items = _pull(TEAM, "team")
    assert [i for i in items if isinstance(i, Failure | Skipped)] == []
    assert sorted(_docs(items)) == [
        "team:NIM-1",
        "team:NIM-2",
        "team:NIM-3",
        "team:NIM-4",
        "team:pages/budget-2027",
        "team:pages/deploy-runbook",
        "team:pages/onboarding",
        "team:pages/support-faq",
    ]


def test_a_markdown_ticket_reads_its_front_matter_and_dated_attributed_comments() -> None:
    ticket = _docs(_pull(TEAM, "team"))["team:NIM-1"]
    assert ticket.kind == "ticket" and ticket.title == "NIM-1: Deploys fail on Fridays"
    assert ticket.metadata == {"status": "In Progress", "type": "Bug", "assignee": "ann@nimbus.dev"}
    assert "Components: deploy, ci" in ticket.text
    assert ticket.acl == {"group:team:eng"}
    chunks = chunk_texts(ticket)
    assert len(chunks) == 3  # the description, then one chunk per comment
    assert chunks[1].startswith("Comment by cho@nimbus.dev on 2026-03-02: The billing sandbox")
    assert chunks[2].startswith("Comment by ann@nimbus.dev on 2026-03-04: Stubbed billing")
    assert "## Comments" not in ticket.text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("### 2026-03-02 — cho@nimbus.dev\nStub it.", [("cho@nimbus.dev", "2026-03-02", "Stub it.")]),
        ("### Ann Lee, 2026-03-04\nDone.", [("Ann Lee", "2026-03-04", "Done.")]),
        (
            "- 2026-02-08 eva@nimbus.dev: Draft up.\n- 2026-02-10 ann@nimbus.dev: VPN step: added.",
            [
                ("eva@nimbus.dev", "2026-02-08", "Draft up."),
                ("ann@nimbus.dev", "2026-02-10", "VPN step: added."),
            ],
        ),
        ("**Cho Park** (2026-03-08): Ordered four.", [("Cho Park", "2026-03-08", "Ordered four.")]),
        ("Just a note without a header.", [("", "", "Just a note without a header.")]),
    ],
    ids=["heading", "heading-name-first", "list", "bold-paragraph", "bare"],
)
def test_comment_sections_in_the_shapes_people_write(body: str, expected: list[tuple[str, str, str]]) -> None:
    description, comments = split_comments(f"The bug.\n\n## Comments\n\n{body}\n\n## Notes\n\nKept.")
    assert [(c["author"], c["created"], c["body"]) for c in comments] == expected
    assert description == "The bug.\n\n## Notes\n\nKept."


def test_wikilinks_and_keys_in_tickets_and_pages_become_links() -> None:
    docs = _docs(_pull(TEAM, "team"))
    assert ("Deploy Runbook", LinkType.LINKS_TO) in _links(docs["team:NIM-1"])  # in the ticket's own text
    assert ("team:NIM-3", LinkType.BLOCKS) in _links(docs["team:NIM-1"])  # links: [blocks NIM-3]
    assert ("Onboarding Guide", LinkType.LINKS_TO) in _links(docs["team:NIM-2"])
    assert {("team:NIM-1", LinkType.RELATES), ("Budget 2027", LinkType.LINKS_TO)} <= _links(
        docs["team:NIM-3"]
    )
    assert ("NIM-3", LinkType.MENTIONS) in _links(docs["team:NIM-4"])
    assert ("Deploy Runbook", LinkType.LINKS_TO) in _links(docs["team:pages/onboarding"])
    assert "[[" not in docs["team:NIM-1"].text


def test_group_acls_name_people_file_groups(make_store: Callable[..., KnowledgeStore]) -> None:
    connector = FolderConnector(FolderConfig(path=TEAM), name="team")
    store = make_store()
    summary = sync_source(store, connector)
    assert summary.status == "ok" and summary.failed == 0 and summary.acl_warnings == []

    def principals(email: str) -> frozenset[str]:
        return frozenset(connector.principals(LinkedIdentity(source="team", account=email)))

    budget = "team:pages/budget-2027"
    assert principals("ben@nimbus.dev") == {"public", "user:ben@nimbus.dev", "group:team:finance"}
    assert store.document(budget, principals("ben@nimbus.dev")) is not None  # group:finance
    assert store.document(budget, principals("cho@nimbus.dev")) is not None  # user:cho@...
    assert store.document(budget, principals("ann@nimbus.dev")) is None
    assert store.document("team:NIM-1", principals("ann@nimbus.dev")) is not None  # group:eng
    assert store.document("team:NIM-1", principals("eva@nimbus.dev")) is None


def test_an_acl_entry_that_matches_nobody_is_reported_with_its_documents(
    make_store: Callable[..., KnowledgeStore], tmp_path: Path
) -> None:
    team = tmp_path / "team"
    shutil.copytree(TEAM, team)
    (team / "pages/payroll.md").write_text("---\ntitle: Payroll\nacl: [group:finanse]\n---\nSalaries.\n")
    (team / "pages/ledger.md").write_text("---\ntitle: Ledger\nacl: [group:acme:finance, public]\n---\nL.\n")
    summary = sync_source(make_store(), FolderConnector(FolderConfig(path=team), name="team"))
    assert summary.acl_warnings == [
        {"principal": "group:team:acme:finance", "documents": ["team:pages/ledger"]},
        {"principal": "group:team:finanse", "documents": ["team:pages/payroll"]},
    ]


def test_the_jira_csv_export_loads_with_no_failures() -> None:
    items = _pull(JIRA, "shop")
    assert [i for i in items if isinstance(i, Failure | Skipped)] == []
    docs = _docs(items)
    assert sorted(docs) == ["shop:SHOP-12", "shop:SHOP-15", "shop:SHOP-9"]
    ticket = docs["shop:SHOP-12"]
    assert ticket.title == "SHOP-12: Checkout times out for large carts"
    assert "Components: checkout, payments" in ticket.text and "Labels: customer-reported" in ticket.text
    assert ticket.updated_at.isoformat() == "2026-03-11T16:30:00+00:00"
    assert chunk_texts(ticket)[1:] == [
        "Comment by 557058:0a1b2c3d on 2026-03-05: Reproduced with 60 items: the tax service takes 9 s.",
        "Comment by Cho Park on 2026-03-10: Batching tax lookups brings it to 1.2 s.",
    ]
    assert {
        ("shop:SHOP-9", LinkType.BLOCKS),
        ("shop:SHOP-15", LinkType.BLOCKS),
        ("shop:SHOP-1", LinkType.PARENT),
        ("Payments Architecture", LinkType.LINKS_TO),
    } <= _links(ticket)
    assert ticket.url.endswith("#SHOP-12")


def test_a_bad_row_of_a_jira_export_fails_alone(tmp_path: Path) -> None:
    (tmp_path / "issues.csv").write_text(
        "Summary,Issue key,Updated\nGood one,AB-1,01/Mar/26 9:00 AM\nBad date,AB-2,the 5th of never\n,,\n"
    )
    items = _pull(tmp_path, "x")
    assert sorted(_docs(items)) == ["x:AB-1"]
    assert [(i.id, i.reason) for i in items if isinstance(i, Failure)] == [("x:issues.csv#row3", "bad date")]


def test_the_confluence_html_export_loads_with_no_failures() -> None:
    items = _pull(CONFLUENCE, "ops")
    assert [i for i in items if isinstance(i, Failure)] == []
    assert {i.reason for i in items if isinstance(i, Skipped)} == {
        "Confluence export files (index, attachments)"
    }
    docs = _docs(items)
    assert sorted(d.title for d in docs.values()) == [
        "Incident Review: March 3 outage",
        "On-call Handbook",
        "Operations Home",
    ]
    handbook = docs["ops:OPS/On-call-Handbook_1001"]
    assert handbook.text.startswith("## Paging\n\nThe primary on-call is paged through PagerDuty")
    assert "rota.png" not in handbook.text  # the attachments list is not the page's text
    assert handbook.updated_at.date().isoformat() == "2026-03-02"
    assert ("ops:OPS/Operations-Home_1000", LinkType.PARENT) in _links(handbook)
    assert ("OPS-31", LinkType.MENTIONS) in _links(handbook)
    review = docs["ops:OPS/1002"]
    assert ("ops:OPS/On-call-Handbook_1001", LinkType.PARENT) in _links(review)
    assert "09:12 | Broker disk full" in review.text
    assert review.metadata == {"space": "Operations", "owner": "Sam Patel"}


def test_exports_survive_pruning(make_store: Callable[..., KnowledgeStore]) -> None:
    store = make_store()
    for path, name in ((JIRA, "shop"), (CONFLUENCE, "ops")):
        first = sync_source(store, FolderConnector(FolderConfig(path=path), name=name))
        again = sync_source(store, FolderConnector(FolderConfig(path=path), name=name))
        assert first.status == again.status == "ok" and first.added == 3
        assert again.deleted == 0 and again.unchanged == 3


def test_exports_take_the_default_acl_given_on_the_command_line() -> None:
    config = FolderConfig.model_validate({"path": str(JIRA), "default_acl": "group:eng, user:ann@nimbus.dev"})
    items = _pull_with(FolderConnector(config, name="shop"))
    assert {d.acl for d in _docs(items).values()} == {frozenset({"group:shop:eng", "user:ann@nimbus.dev"})}


def test_a_broken_people_file_is_a_failure_and_grants_no_groups(tmp_path: Path) -> None:
    (tmp_path / "people.json").write_text('{"users": [{"email": "ann@nimbus.dev", "groups": ["eng"]')
    connector = FolderConnector(FolderConfig(path=tmp_path), name="team")
    items = _pull_with(connector)
    assert [(i.id, i.reason) for i in items if isinstance(i, Failure)] == [
        ("team:people.json", "bad people file")
    ]
    assert connector.principals(LinkedIdentity(source="team", account="ann@nimbus.dev")) == {
        "public",
        "user:ann@nimbus.dev",
    }


def test_a_long_table_is_chunked_between_rows_each_chunk_under_its_header_row() -> None:
    rows = "\n".join(
        f"| Part {i} | {i}.5 kg | {i * 3}.25 m/s | shipped from depot {i} by road |" for i in range(40)
    )
    text = f"# Parts\n\nIntro line.\n\n## Catalogue\n\n| Part | Weight | Speed | Notes |\n|---|---|---|---|\n{rows}\n"
    doc = SourceDoc(
        id="t:p",
        title="Parts",
        text=text,
        kind="page",
        url="",
        acl={"public"},
        source="t",
        updated_at="2026-01-01",
    )
    chunks = chunk_texts(doc)
    assert len(chunks) > 1
    for chunk in chunks:
        body = [line for line in chunk.splitlines() if line.startswith("| Part ") and "kg" in line]
        if body:  # every piece of the table sits under its heading and keeps its header row
            assert chunk.splitlines()[0] == "## Catalogue"
            assert "| Part | Weight | Speed | Notes |" in chunk
        assert all(line.endswith("by road |") for line in body)  # no row is cut
    found = [
        line for chunk in chunks for line in chunk.splitlines() if line.startswith("| Part ") and "kg" in line
    ]
    assert len(set(found)) == 40
