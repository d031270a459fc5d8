"""`sleuth vault rotate`: put the new key first, rotate, drop the old key; everything stored still opens."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine
from typer.testing import CliRunner

from bot.cli import app
from bot.vault import TokenVault
from connectors.database import sqlite_url


def test_rotate_then_drop_the_old_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old, new = TokenVault.generate_key(), TokenVault.generate_key()
    data.mkdir()
    engine = create_engine(sqlite_url(data))
    TokenVault.open(engine, old, production=True).put_secret("jira.api_token", "tok")
    env = {"SLEUTH_DATA_DIR": str(data), "SLEUTH_EMBEDDER__KIND": "hash"}

    alone = CliRunner().invoke(app, ["vault", "rotate"], env={**env, "SLEUTH_VAULT_KEY": old})
    rotated = CliRunner().invoke(app, ["vault", "rotate"], env={**env, "SLEUTH_VAULT_KEY": f"{new},{old}"})

    assert alone.exit_code == 1 and "put the new key first" in alone.output.replace("\n", " ")
    assert rotated.exit_code == 0, rotated.output
    assert "re-encrypted 2 stored values" in rotated.output  # the secret and the vault's own key check
    assert (
        TokenVault.open(engine, new, production=True).get_secret("jira.api_token").get_secret_value() == "tok"
    )
