"""The App Home admin flow over real HTTP: add a source through the modal (fields from the connector's config
model), see it sync, see its counts; a non-admin is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.listeners.views.admin_sources import ADD_SOURCE, NOT_ADMIN
from bot.testing.slack_render import format_message
from tests.conftest import EXAMPLES
from tests.e2e.conftest import WAIT_S, EnvFactory


def test_an_admin_adds_a_source_in_app_home_and_sees_it_sync(make_env: EnvFactory, tmp_path: Path) -> None:
    env = make_env()
    dana = env.ids["dana@acme.io"]
    env.bot.settings.admin_users.append(dana)
    docs = tmp_path / "handbook"
    shutil.copytree(EXAMPLES / "wiki" / "hr", docs / "wiki" / "hr")

    env.slack.open_app_home(dana)
    home = env.slack.home_view(dana)
    assert home is not None and "Sources (admin)" in format_message(home)

    env.slack.click_home_button(dana, f"{ADD_SOURCE}:folder")
    [modal] = env.slack.wait_for(lambda: env.slack.open_modals() or None, timeout=WAIT_S)
    assert {b["block_id"] for b in modal["blocks"]} >= {"source_name", "path", "pages_glob"}

    bad = env.slack.submit_view(dana, modal, {"source_name": {"value": "handbook"}})
    assert bad.json()["response_action"] == "errors" and "path" in bad.json()["errors"]

    env.slack.submit_view(dana, modal, {"source_name": {"value": "handbook"}, "path": {"value": str(docs)}})

    def synced() -> str | None:
        view = env.slack.home_view(dana)
        text = format_message(view) if view else ""
        return text if "*handbook* (folder) · ok · 7 documents" in text else None

    assert env.slack.wait_for(synced, timeout=WAIT_S)
    assert env.bot.runtime.catalog.get("handbook") is not None


def test_a_non_admin_gets_no_admin_home_and_a_refusal(make_env: EnvFactory) -> None:
    env = make_env()
    carol = env.ids["carol@acme.io"]
    env.slack.open_app_home(carol)
    home = env.slack.home_view(carol)
    assert home is not None and "Sources (admin)" not in format_message(home)
    dana = env.ids["dana@acme.io"]  # dana is an admin only long enough to render the buttons
    env.bot.settings.admin_users.append(dana)
    env.slack.open_app_home(dana)
    env.bot.settings.admin_users.remove(dana)
    env.slack.click_home_button(dana, f"{ADD_SOURCE}:folder")
    assert env.slack.wait_for(
        lambda: any(NOT_ADMIN in m.get("text", "") for m in env.slack.bot_messages(env.slack.open_dm(dana))),
        timeout=WAIT_S,
    )
    assert env.slack.open_modals() == []
