"""The App Home source modal, built from a connector's pydantic config: the Google Drive source's fields."""

from __future__ import annotations

from bot.listeners.views.admin_sources import add_source_modal, config_from_values
from connectors.sources.google_drive import GoogleDriveConfig


def test_the_drive_modal_asks_for_its_settings_and_keeps_the_key_secret() -> None:
    modal = add_source_modal("google_drive")
    blocks = {b["block_id"]: b for b in modal["blocks"]}
    assert {"source_name", "folders", "domains", "treat_link_shared_as", "service_account_key"} <= set(blocks)
    assert "stored encrypted" in str(blocks["service_account_key"]) and "oauth" not in blocks
    values = {
        "source_name": {"v": {"value": "drive"}},
        "folders": {"v": {"value": "f1, f2"}},
        "domains": {"v": {"value": "acme.io"}},
        "service_account_key": {"v": {"value": '{"client_email": "a@b", "private_key": "k"}'}},
        "delegated_user": {"v": {"value": "admin@acme.io"}},
    }
    name, config = config_from_values("google_drive", values)
    parsed = GoogleDriveConfig.model_validate(config)
    assert name == "drive" and parsed.folders == ["f1", "f2"] and parsed.treat_link_shared_as == "nobody"
