"""The permission audit over a Slack source: its people are the audit's users, its private channels' threads
the restricted documents probed on every path; no leaks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.admin_views import AdminViews
from bot.identity.linking import would_link
from bot.render import progress_text
from bot.runtime import Runtime
from bot.settings import EmbedderConfig, Settings
from bot.testing.slack_emulator import SlackEmulator
from evals.audit import audit_permissions


@pytest.fixture
def slack() -> Iterator[SlackEmulator]:
    with SlackEmulator() as emulator:
        for n, name in enumerate(("ann", "bob", "cid"), start=1):
            emulator.add_user(f"U{n}", name, email=f"{name}@acme.io")
        emulator.add_user("U4", "gus", email="gus@partner.io", is_restricted=True)
        emulator.add_channel("C1", "eng-help", members=["U1", "U2", "U4"])
        emulator.add_channel("C2", "design", members=["U1", "U2", "U3"])
        emulator.add_channel("G1", "launch", members=["U1"], is_private=True)
        emulator.add_channel("G2", "payroll", members=["U2", "U3"], is_private=True)
        vpn = emulator.post_as_user("U1", "C1", "How do I rotate the VPN certificate?")
        emulator.post_as_user("U2", "C1", "Use certctl rotate on the bastion host.", vpn)
        emulator.post_as_user("U3", "C2", "The Heron mockups are in the Figma team space.")
        launch = emulator.post_as_user("U1", "G1", "Project Bluebird launches on 14 May with Orca pricing.")
        emulator.post_as_user("U1", "G1", "Bluebird beta list: 40 design partners.", launch)
        emulator.post_as_user("U2", "G2", "Payroll cutoff moves to the 23rd; bonus pool is 4.1%.")
        yield emulator


def test_the_audit_probes_slack_threads_and_finds_no_leak(
    slack: SlackEmulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rt = Runtime(Settings(_env_file=None, data_dir=tmp_path, examples_dir=tmp_path / "none",
                          embedder=EmbedderConfig(kind="hash")))  # fmt: skip
    config = {"token": slack.bot_token, "base_url": slack.api_url, "channels": ["eng-help", "design"]}
    rt.catalog.add("slk", "slack", config)
    users = {email: rt.principals_for_email(email) for email in rt.known_people()}
    assert sorted(users) == ["ann@acme.io", "bob@acme.io", "cid@acme.io", "gus@partner.io"]
    before = audit_permissions(rt, users)

    assert rt.sync_service.run("slk").added == 4
    restricted = {doc.id for doc in rt.store.restricted_documents()}
    assert {"slk:G1", "slk:G2", "slk:C2"} <= {doc_id.rpartition(":")[0] for doc_id in restricted}
    report = audit_permissions(
        rt, users, status_text=progress_text, link_check=would_link, admin_views=AdminViews(rt.store)
    )

    with capsys.disabled():
        print(
            f"\nslack permission audit: probes {before.probes} -> {report.probes}  leaks: {len(report.leaks)}"
        )
    assert before.probes < 50 < report.probes  # the Slack threads joined the probe set
    assert {"search:hybrid", "document", "flow:answer", "drift:search:dense"} <= set(report.by_path)
    assert report.leaks == []
    rt.engine.dispose()
