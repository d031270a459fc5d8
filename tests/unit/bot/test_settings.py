"""Settings read a shared `.env` without tripping over keys that are not Sleuth's."""

from __future__ import annotations

from pathlib import Path

from bot.settings import Settings


def test_unknown_keys_in_dotenv_are_ignored(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("JIRA_TOKEN=abc\nOTHER_TOOL_URL=http://x\nSLEUTH_PORT=4000\nSLEUTH_FLOW__MAX_ROUNDS=2\n")

    settings = Settings(_env_file=env)

    assert settings.port == 4000 and settings.flow.max_rounds == 2
    assert not hasattr(settings, "jira_token")
