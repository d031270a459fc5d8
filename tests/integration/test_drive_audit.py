"""The permission audit with a Google Drive source beside a folder: added through the catalog (its key in
the vault), built through the connector registry, synced from the Drive emulator, its askers resolved the
way the bot resolves them (the directory trusted for Drive). Zero leaks, and the probe set grows with it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr

from bot.admin_views import AdminViews
from bot.identity.linking import would_link
from bot.render import progress_text
from bot.runtime import Runtime
from bot.settings import EmbedderConfig, Settings
from connectors.sync import sync_source
from evals.audit import AuditReport, audit_permissions
from tests.integration.connectors.drive_data import PEOPLE, acme_drive
from tests.servers.google_drive import FakeDrive, serve_drive

NOTE = "---\ntitle: Eng on-call notes\nacl: [group:eng]\n---\n# On-call\n\nThe pager rotates every Monday.\n"


@pytest.fixture
def fake() -> FakeDrive:
    return acme_drive(max_page=50)


@pytest.fixture
def api(fake: FakeDrive) -> Iterator[str]:
    with serve_drive(fake) as url:
        yield url


def notes_folder(root: Path) -> Path:
    (root / "wiki").mkdir(parents=True)
    (root / "wiki" / "oncall.md").write_text(NOTE)
    people = [{"email": email, "groups": ["eng"] if email == "ann@acme.io" else []} for email in PEOPLE]
    (root / "people.json").write_text(json.dumps({"users": people}))
    return root


def audit(rt: Runtime) -> AuditReport:
    users = {email: rt.principals_for_email(email) for email in PEOPLE}
    return audit_permissions(
        rt, users, status_text=progress_text, link_check=would_link, admin_views=AdminViews(rt.store)
    )


def test_the_audit_covers_drive_with_no_leaks(tmp_path: Path, api: str, fake: FakeDrive) -> None:
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path / "data",
        examples_dir=tmp_path / "none",
        embedder=EmbedderConfig(kind="hash"),
        vault_key=SecretStr(Fernet.generate_key().decode()),
    )
    rt = Runtime(settings)
    rt.catalog.add("notes", "folder", {"path": str(notes_folder(tmp_path / "notes"))})
    sync_source(rt.store, rt.connector("notes"))
    before = audit(rt)
    config = {
        "folders": ["eng"],
        "domains": ["acme.io"],
        "service_account_key": fake.account.key_json(),
        "delegated_user": "admin@acme.io",
        "api_url": api,
        "directory_url": api,
        "token_url": f"{api}/token",
    }
    rt.catalog.add("drive", "google_drive", config)
    assert "private_key" not in json.dumps(rt.catalog.get("drive").config)  # the key went to the vault
    assert sync_source(rt.store, rt.connector("drive")).added == 5
    assert "group:drive:domain:acme.io" in rt.principals_for_email("bob@acme.io")
    after = audit(rt)
    print(
        f"\npermission audit: folder only {before.probes} probes; with drive {after.probes}, leaks {len(after.leaks)}"
    )
    assert after.leaks == [] and before.leaks == []
    assert after.probes > before.probes
    assert {"search:hybrid", "flow:trace", "drift:search:dense", "gaps"} <= set(after.by_path)
