"""The folder connector: pages, tickets, typed links, ACLs, aliases, and failures that do not stop a run."""

from __future__ import annotations

from pathlib import Path

from connectors.base import Deleted, Failure, LinkedIdentity, LinkType, Skipped, SourceDoc
from tests.conftest import folder


def _write(root: Path, rel: str, text: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


PAGE = """---
title: Kestrel Motion Systems
space: ops
updated: 2026-01-02
version: 3
acl: [group:acme:ops, user:dana@acme.io]
aliases: [S-8, Supplier 8]
---
Kestrel supplies hub motors. See ENG-142, [[Fleet Map]] and [the directory](directory.md).
"""


def _drain(connector, cursor=None):  # type: ignore[no-untyped-def]
    pulled = connector.pull(cursor)
    items = []
    while True:
        try:
            items.append(next(pulled))
        except StopIteration as stop:
            return items, stop.value


def test_page_front_matter_links_and_acl(tmp_path: Path) -> None:
    _write(tmp_path, "wiki/ops/kestrel.md", PAGE)
    _write(tmp_path, "wiki/ops/directory.md", "---\ntitle: Directory\n---\nAll suppliers.")
    items, _ = _drain(folder(tmp_path))
    page = next(i for i in items if isinstance(i, SourceDoc) and i.title == "Kestrel Motion Systems")
    assert page.id == "acme:wiki/ops/kestrel"
    assert page.acl == {"group:acme:ops", "user:dana@acme.io"}
    assert page.aliases == ("S-8", "Supplier 8")
    assert page.version == "3" and page.updated_at.year == 2026
    links = {(link.target, link.type, link.by_name) for link in page.links}
    assert ("acme:wiki/ops/directory", LinkType.LINKS_TO, False) in links
    assert ("Fleet Map", LinkType.LINKS_TO, True) in links
    assert ("ENG-142", LinkType.MENTIONS, True) in links
    assert "[[" not in page.text


def test_ticket_links_comments_and_key_alias(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "tickets/ENG-150.json",
        '{"key": "ENG-150", "summary": "Motor data missing", "description": "Waiting on OPS-31.",'
        ' "status": "Open", "links": [{"type": "blocks", "key": "ENG-160"}], "pages": ["Release Plan"],'
        ' "comments": [{"author": "bob@acme.io", "created": "2026-03-01", "body": "Chased Supplier 8."}],'
        ' "acl": ["public"]}',
    )
    items, _ = _drain(folder(tmp_path))
    (ticket,) = [i for i in items if isinstance(i, SourceDoc)]
    assert ticket.id == "acme:ENG-150" and ticket.kind == "ticket" and ticket.aliases == ("ENG-150",)
    links = {(link.target, link.type) for link in ticket.links}
    assert ("acme:ENG-160", LinkType.BLOCKS) in links
    assert ("Release Plan", LinkType.LINKS_TO) in links
    assert ("OPS-31", LinkType.MENTIONS) in links
    assert "Chased Supplier 8." in ticket.text and "Status: Open" in ticket.text


def test_malformed_files_fail_unknown_ones_are_skipped_and_the_rest_syncs(tmp_path: Path) -> None:
    _write(tmp_path, "wiki/a/good.md", "---\ntitle: Good\n---\nFine.")
    _write(tmp_path, "wiki/a/bad-front.md", "---\ntitle: [unclosed\n---\nBody")
    _write(tmp_path, "wiki/a/no-front.md", "Just text")
    _write(tmp_path, "wiki/a/binary.md", b"\x00\x01\x02binary")
    _write(tmp_path, "wiki/a/empty.md", "")
    _write(tmp_path, "wiki/a/picture.png", b"\x89PNG")
    _write(tmp_path, "tickets/BAD-1.json", "{not json")
    items, _ = _drain(folder(tmp_path))
    failed = {i.id.split(":", 1)[1] for i in items if isinstance(i, Failure)}
    assert failed == {
        "wiki/a/bad-front.md",
        "wiki/a/no-front.md",
        "wiki/a/binary.md",
        "wiki/a/empty.md",
        "tickets/BAD-1.json",
    }
    assert [i.title for i in items if isinstance(i, SourceDoc)] == ["Good"]
    assert [(i.id, i.reason) for i in items if isinstance(i, Skipped)] == [
        ("acme:wiki/a/picture.png", "not a document type (.png)")
    ]


def test_cursor_skips_unchanged_files_and_reports_deletions(tmp_path: Path) -> None:
    _write(tmp_path, "wiki/a/one.md", "---\ntitle: One\n---\nFirst.")
    _write(tmp_path, "wiki/a/two.md", "---\ntitle: Two\n---\nSecond.")
    connector = folder(tmp_path)
    _, cursor = _drain(connector)
    again, cursor = _drain(connector, cursor)
    assert again == []
    (tmp_path / "wiki/a/two.md").unlink()
    gone, _ = _drain(connector, cursor)
    assert gone == [Deleted(id="acme:wiki/a/two")]


def test_listing_after_a_pull_reads_only_files_that_changed(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _write(tmp_path, "wiki/a/one.md", "---\ntitle: One\n---\nFirst.")
    _write(tmp_path, "wiki/a/two.md", "---\ntitle: Two\n---\nSecond.")
    _write(tmp_path, "tickets/ENG-1.json", '{"key": "ENG-1", "summary": "S", "description": "D"}')
    _, cursor = _drain(folder(tmp_path))
    connector = folder(tmp_path)  # a later run: a fresh connector with the stored cursor
    read: list[str] = []
    real_ids = connector._ids
    monkeypatch.setattr(connector, "_ids", lambda path, rel, at: read.append(rel) or real_ids(path, rel, at))
    assert _drain(connector, cursor)[0] == []
    assert sorted(connector.list_ids()) == ["acme:ENG-1", "acme:wiki/a/one", "acme:wiki/a/two"]
    assert read == []  # nothing re-read to list what the folder holds

    _write(tmp_path, "wiki/a/two.md", "---\ntitle: Two\n---\nSecond, longer now.")
    (tmp_path / "wiki/a/one.md").unlink()
    assert sorted(connector.list_ids()) == ["acme:ENG-1", "acme:wiki/a/two"]
    assert read == ["wiki/a/two.md"]  # the edited file is read again; the pull's record no longer fits it


def test_principals_come_from_the_directory(tmp_path: Path) -> None:
    _write(tmp_path, "people.json", '{"users": [{"email": "bob@acme.io", "groups": ["finance"]}]}')
    connector = folder(tmp_path)
    assert connector.principals(LinkedIdentity(source="acme", account="Bob@acme.io")) == {
        "public",
        "user:bob@acme.io",
        "group:acme:finance",
    }
    assert connector.principals(LinkedIdentity(source="acme", account="eve@acme.io")) == {
        "public",
        "user:eve@acme.io",
    }


def test_an_oauth_linked_identity_is_keyed_by_its_verified_email_not_its_sub(tmp_path: Path) -> None:
    """A provider's `sub` is its own id; one that reads like Bob's email is still not Bob."""
    _write(tmp_path, "people.json", '{"users": [{"email": "bob@acme.io", "groups": ["finance"]}, '
           '{"email": "ann@acme.io", "groups": ["eng"]}]}')  # fmt: skip
    connector = folder(tmp_path)

    def linked(sub: str, email: str | None) -> set[str]:
        return connector.principals(LinkedIdentity(source="acme", account=sub, email=email, access_token="t"))

    assert linked("bob@acme.io", "ann@acme.io") == {"public", "user:ann@acme.io", "group:acme:eng"}
    assert linked("bob@acme.io", None) == {"public"}  # no verified email: nobody in the people file
    assert linked("7f3a-ann", "Ann@acme.io") == {"public", "user:ann@acme.io", "group:acme:eng"}


def test_wikilinks_in_a_json_tickets_text_are_links_without_a_pages_list(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "tickets/ENG-7.json",
        '{"key": "ENG-7", "summary": "Runbook gap", "description": "Step 4 of [[Deploy Runbook]] is wrong.",'
        ' "comments": [{"author": "ann@acme.io", "created": "2026-03-01", "body": "See [[Rollback Guide]]."}]}',
    )
    items, _ = _drain(folder(tmp_path))
    (ticket,) = [i for i in items if isinstance(i, SourceDoc)]
    links = {(link.target, link.type, link.by_name) for link in ticket.links}
    assert {("Deploy Runbook", LinkType.LINKS_TO, True), ("Rollback Guide", LinkType.LINKS_TO, True)} <= links
    assert "Step 4 of Deploy Runbook is wrong." in ticket.text
