from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine, select

from bot.vault import (
    KEY_FILE_NAME,
    ConfigError,
    TokenSet,
    TokenVault,
    VaultError,
    default_key_file,
    vault_secrets,
    vault_tokens,
)
from connectors.database import make_engine

TOKEN = TokenSet(
    access_token="at-PLAINTEXT-1", refresh_token="rt-PLAINTEXT-1", expires_at=1000.0, scope="read"
)


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}")


def test_production_without_a_key_refuses(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="required in production"):
        TokenVault.open(engine, None, production=True, data_dir=tmp_path)
    with pytest.raises(ConfigError):
        TokenVault.open(engine, "  ", production=True, data_dir=tmp_path)
    assert not (tmp_path / KEY_FILE_NAME).exists()


def test_a_malformed_key_is_refused_without_echoing_it(engine: Engine) -> None:
    with pytest.raises(ConfigError) as caught:
        TokenVault.open(engine, "not-a-fernet-key", production=True)
    assert "not-a-fernet-key" not in str(caught.value)


def test_dev_without_a_key_creates_a_private_key_file_outside_the_data_dir(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    data_dir = tmp_path / "data"
    with caplog.at_level(logging.WARNING, logger="bot.vault"):
        vault = TokenVault.open(engine, None, production=False, data_dir=data_dir)
    key_file = default_key_file(data_dir)
    assert key_file.parent == tmp_path / "config" / "sleuth"  # a copied data directory carries no key
    assert not (data_dir / KEY_FILE_NAME).exists()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert [r.getMessage() for r in caplog.records] == ["no vault key configured; created a local key file"]
    assert key_file.read_text().strip() not in caplog.text
    vault.put_secret("jira.api_token", "tok")

    reopened = TokenVault.open(engine, None, production=False, data_dir=data_dir)  # same key, from the file
    assert reopened.get_secret("jira.api_token") == SecretStr("tok")


def test_a_key_file_left_in_the_data_dir_moves_out(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    old = data_dir / KEY_FILE_NAME
    old.write_text(TokenVault.generate_key() + "\n")
    old.chmod(0o600)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    TokenVault.open(engine, None, production=False, data_dir=data_dir).put_secret("n", "v")
    assert not old.exists() and default_key_file(data_dir).exists()
    assert TokenVault.open(engine, None, production=False, data_dir=data_dir).get_secret("n") == SecretStr(
        "v"
    )


def test_dev_key_file_readable_by_others_is_refused(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    TokenVault.open(engine, None, production=False, data_dir=tmp_path)
    os.chmod(default_key_file(tmp_path), 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        TokenVault.open(engine, None, production=False, data_dir=tmp_path)


def test_dev_without_key_or_data_dir_refuses(engine: Engine) -> None:
    with pytest.raises(ConfigError):
        TokenVault.open(engine, None, production=False)


def test_token_round_trip_is_encrypted_at_rest(engine: Engine) -> None:
    vault = TokenVault.open(engine, TokenVault.generate_key(), production=True)
    vault.put_token("T1", "U1", "acme", TOKEN)
    assert vault.get_token("T1", "U1", "acme") == TOKEN
    assert vault.get_token("T1", "U2", "acme") is None
    with engine.connect() as conn:
        [blob] = conn.execute(select(vault_tokens.c.ciphertext)).scalars().all()
    assert b"PLAINTEXT" not in blob

    newer = TokenSet(access_token="at-2", refresh_token=None)
    vault.put_token("T1", "U1", "acme", newer)  # upsert
    assert vault.get_token("T1", "U1", "acme") == newer
    assert vault.delete_token("T1", "U1", "acme") is True
    assert vault.get_token("T1", "U1", "acme") is None
    assert vault.delete_token("T1", "U1", "acme") is False


def test_secret_round_trip(engine: Engine) -> None:
    vault = TokenVault.open(engine, TokenVault.generate_key(), production=True)
    vault.put_secret("confluence.api_token", "hunter2")
    vault.put_secret("confluence.api_token", SecretStr("hunter3"))
    secret = vault.get_secret("confluence.api_token")
    assert secret is not None and secret.get_secret_value() == "hunter3"
    assert "hunter3" not in repr(secret)
    assert vault.get_secret("nope") is None
    with engine.connect() as conn:
        assert all(
            b"hunter" not in blob for blob in conn.execute(select(vault_secrets.c.ciphertext)).scalars()
        )
    assert vault.delete_secret("confluence.api_token") is True
    with pytest.raises(ValueError):
        vault.put_secret("__vault_check__", "x")


def test_key_rotation_with_multifernet(engine: Engine) -> None:
    old, new = TokenVault.generate_key(), TokenVault.generate_key()
    TokenVault.open(engine, old, production=True).put_token("T1", "U1", "acme", TOKEN)

    both = TokenVault.open(engine, f"{new}, {old}", production=True)  # new first: encrypts with new
    assert both.get_token("T1", "U1", "acme") == TOKEN
    assert both.rotate() == 2  # the token and the key check
    only_new = TokenVault.open(engine, new, production=True)
    assert only_new.get_token("T1", "U1", "acme") == TOKEN

    with pytest.raises(ConfigError, match="does not match"):
        TokenVault.open(engine, old, production=True)  # the old key alone no longer reads the vault


def test_a_wrong_key_is_refused_at_open(engine: Engine) -> None:
    TokenVault.open(engine, TokenVault.generate_key(), production=True)
    with pytest.raises(ConfigError, match="does not match"):
        TokenVault.open(engine, TokenVault.generate_key(), production=True)


def test_undecryptable_value_is_a_vault_error(engine: Engine) -> None:
    vault = TokenVault.open(engine, TokenVault.generate_key(), production=True)
    with pytest.raises(VaultError):
        vault.decrypt(b"garbage")


def test_tokens_never_show_in_repr() -> None:
    text = f"{TOKEN!r} {TOKEN!s} {[TOKEN]}"
    assert "PLAINTEXT" not in text
    assert "refresh=yes" in text


def test_token_set_from_a_token_response() -> None:
    token = TokenSet.from_response(
        {"access_token": "a", "expires_in": 60, "token_type": "bearer"}, 100.0, "r"
    )
    assert (token.expires_at, token.refresh_token, token.token_type) == (160.0, "r", "bearer")
    assert token.expired(now=140.0) and not token.expired(now=120.0)
    assert not TokenSet(access_token="a").expired(now=1e12)
    with pytest.raises(ValueError):
        TokenSet.from_response({"error": "x"}, 0.0)
