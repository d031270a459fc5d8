"""Folder ACL mapping, table-driven over every entry form the folder source documents (`public`,
`user:<email>`, `group:<name>`, `group:<source>:<name>`, in front matter, ticket records and `default_acl`):
an entry that maps to no principal leaves the document to nobody, and the pull says so right after it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connectors.base import PUBLIC, Failure, SourceDoc
from connectors.sources.access import UNMAPPED
from connectors.sources.folder import FolderConfig, FolderConnector
from connectors.sources.folder.common import FolderContext, acl_principal


@pytest.mark.parametrize(
    ("entry", "principals"),
    [
        ("public", {PUBLIC}),
        (" Public ", {PUBLIC}),
        ("user:Ann@Acme.io", {"user:ann@acme.io"}),
        ("group:eng", {"group:team:eng"}),
        ("group:team:eng", {"group:team:eng"}),  # already namespaced
        ("GROUP:Eng", {"group:team:eng"}),
        ("group:acme:eng", {"group:team:acme:eng"}),  # another source's name is a group name here
        ("user:ann", None),  # not an email
        ("user:confluence:acc-1", None),  # another source's account: not a folder principal
        ("user:", None),
        ("group:", None),
        ("group:team:", None),
        ("team:leads", None),
        ("ann@acme.io", None),  # the kind left out
        ("", None),
    ],
    ids=["public", "public-spaced", "user", "group", "group-namespaced", "group-case", "group-other-source",
         "user-no-email", "user-other-source", "user-empty", "group-empty", "group-namespace-only",
         "unknown-kind", "no-kind", "empty"],
)  # fmt: skip
def test_entries(entry: str, principals: set[str] | None) -> None:
    mapped = acl_principal(entry, "team")
    assert mapped.principals == (principals or set())
    assert bool(mapped.unmapped) is (principals is None)
    ctx = FolderContext("team", Path("."), None, ("public",))
    assert ctx.acl([entry, "group:finance"]) == ({"group:team:finance", *principals} if principals else set())
    assert bool(ctx.take_unmapped()) is (principals is None) and ctx.take_unmapped() == ""


@pytest.mark.parametrize(
    ("value", "acl"),
    [(None, {"group:team:eng"}), ([], set()), ("group:eng", {"group:team:eng"}), (["public"], {PUBLIC})],
    ids=["default", "empty-list", "one-string", "list"],
)
def test_declared_or_default(value: Any, acl: set[str]) -> None:
    assert FolderContext("team", Path("."), None, ("group:eng",)).acl(value) == acl


def _pull(root: Path, **config: Any) -> list[Any]:
    connector = FolderConnector(FolderConfig(path=root, **config), name="team")
    return [i for i in connector.pull(None) if isinstance(i, SourceDoc | Failure)]


def test_a_page_and_a_ticket_with_an_unmapped_entry_are_nobody_s_and_reported(tmp_path: Path) -> None:
    (tmp_path / "wiki").mkdir()
    (tmp_path / "tickets").mkdir()
    (tmp_path / "wiki/board.md").write_text(
        "---\ntitle: Board\nacl: [group:board, team:leads]\n---\nSecret.\n"
    )
    (tmp_path / "wiki/open.md").write_text("---\ntitle: Open\nacl: [public]\n---\nHello.\n")
    ticket = {"key": "NIM-7", "summary": "Layoffs", "updated": "2026-01-02", "acl": ["user:hr"]}
    (tmp_path / "tickets/NIM-7.json").write_text(json.dumps(ticket))
    items = _pull(tmp_path)
    docs = {i.id: i for i in items if isinstance(i, SourceDoc)}
    failures = [(f.id, f.reason, f.detail) for f in items if isinstance(f, Failure)]
    assert docs["team:wiki/board"].acl == docs["team:NIM-7"].acl == frozenset()
    assert docs["team:wiki/open"].acl == {PUBLIC}
    assert sorted(failures) == [
        ("team:NIM-7", UNMAPPED, "ACL entry 'user:hr'"),
        ("team:wiki/board", UNMAPPED, "ACL entry 'team:leads'"),
    ]


def test_an_unmapped_default_acl_closes_every_document_that_declares_none(tmp_path: Path) -> None:
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki/a.md").write_text("---\ntitle: A\n---\nText.\n")
    items = _pull(tmp_path, default_acl=["group:eng", "everyone"])
    assert [i.acl for i in items if isinstance(i, SourceDoc)] == [frozenset()]
    assert [(f.id, f.detail) for f in items if isinstance(f, Failure)] == [
        ("team:wiki/a", "ACL entry 'everyone'")
    ]
