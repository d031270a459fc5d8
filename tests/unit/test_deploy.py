"""deploy/ stays true to the code: its commands are real `sleuth` commands and every SLEUTH_ setting it names is
a field of Settings (a renamed option or variable fails here, not in a company's rollout)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from bot.cli import app
from bot.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _sleuth_services() -> dict[str, dict]:  # type: ignore[type-arg]
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    return {name: s for name, s in services.items() if s.get("image") == "sleuth:latest"}


def test_compose_runs_serve_and_two_workers_on_the_servers() -> None:
    services = _sleuth_services()
    assert services["serve"]["command"][:1] == ["serve"] and services["worker"]["deploy"]["replicas"] == 2
    for service in services.values():
        assert service["environment"]["SLEUTH_DATABASE_URL"].startswith("postgresql://")
        assert service["environment"]["SLEUTH_CHROMA_URL"] == "http://chroma:8000"
        help_text = CliRunner().invoke(app, [*service["command"], "--help"])
        assert help_text.exit_code == 0, help_text.output
        for option in (a for a in service["command"] if a.startswith("--")):
            assert option in help_text.output


def test_every_setting_named_in_deploy_exists() -> None:
    text = (DEPLOY / "compose.yaml").read_text() + (DEPLOY / "env.example").read_text()
    named = set(re.findall(r"\bSLEUTH_([A-Z_]+?)(?:__[A-Z_]+)?\b", text))
    fields = {name.upper() for name in Settings.model_fields}
    assert named and named <= fields, named - fields
