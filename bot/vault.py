"""Secrets at rest: users' OAuth tokens and connector secrets entered by admins, encrypted with Fernet.

Keys come from configuration as one Fernet key or several separated by commas, the newest first: every value
is encrypted with the first and decrypted with any of them (`MultiFernet`), so a key is rotated by putting the
new one in front, calling `TokenVault.rotate()` (`sleuth vault rotate`), then dropping the old one. In
development, without a key, the vault creates a key file (mode 0600) in the user's config directory
(`default_key_file`: one per user account, never inside the data directory, so a copied or backed-up data
directory does not carry the key that opens it; a key file an older version left there is moved out) and says
so in a warning; in production it refuses.

Nothing here logs or reprs a secret: `TokenSet` hides its tokens, `get_secret` answers a `SecretStr`.

Errors: `ConfigError` (unusable configuration: missing, malformed or wrong key, key file readable by others),
`VaultError` (a stored value that the configured keys cannot decrypt).

Tables (own `MetaData`, created on open): `vault_tokens` (team, user, source -> ciphertext) and
`vault_secrets` (name -> ciphertext; names starting with "__" are reserved, "__vault_check__" tells a wrong
key at startup).
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from pydantic import SecretStr
from sqlalchemy import (
    Column,
    Engine,
    Float,
    LargeBinary,
    MetaData,
    String,
    Table,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection

from bot.slack_columns import owner_columns
from connectors.database import create_tables

log = logging.getLogger(__name__)

KEY_FILE_NAME = "vault.key"
_CHECK_NAME = "__vault_check__"
_CHECK_VALUE = b"sleuth-vault"

metadata = MetaData()


def _sealed_columns() -> list[Column[Any]]:
    """What the vault keeps of any value, a token or a secret: its ciphertext and when it was last written."""
    return [Column("ciphertext", LargeBinary, nullable=False), Column("updated_at", Float, nullable=False)]


vault_tokens = Table("vault_tokens", metadata, *owner_columns(primary_key=True), *_sealed_columns())
vault_secrets = Table(
    "vault_secrets", metadata, Column("name", String(255), primary_key=True), *_sealed_columns()
)
_KEYS = {vault_tokens: ("team", "user", "source"), vault_secrets: ("name",)}  # each table's primary key


class ConfigError(Exception):
    """The configuration cannot be used as it is; the message says what to change (never a secret)."""


class VaultError(Exception):
    """A stored value cannot be decrypted with the configured keys."""


@dataclass(frozen=True)
class TokenSet:
    """One OAuth grant as Sleuth keeps it. `expires_at`: epoch seconds, None when the provider gave none."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    scope: str | None = None

    def __repr__(self) -> str:  # the dataclass repr already skips tokens; say so explicitly
        refresh = "yes" if self.refresh_token else "no"
        return f"TokenSet(token_type={self.token_type!r}, expires_at={self.expires_at!r}, refresh={refresh})"

    __str__ = __repr__

    def expired(self, now: float, leeway_s: float = 30.0) -> bool:
        return self.expires_at is not None and self.expires_at - leeway_s <= now

    @classmethod
    def from_response(
        cls, token: Mapping[str, Any], now: float, refresh_token: str | None = None
    ) -> TokenSet:
        """From a token endpoint response; the given `refresh_token` is kept when the reply has none."""
        access = token.get("access_token")
        if not isinstance(access, str) or not access:
            raise ValueError("token response has no access_token")
        expires_in = token.get("expires_in")
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool):
            expires_at: float | None = now + float(expires_in)
        else:
            raw_at = token.get("expires_at")
            expires_at = float(raw_at) if isinstance(raw_at, int | float) else None
        return cls(
            access_token=access,
            refresh_token=token.get("refresh_token") or refresh_token,
            token_type=str(token.get("token_type") or "Bearer"),
            expires_at=expires_at,
            scope=token.get("scope"),
        )

    def _to_bytes(self) -> bytes:
        return json.dumps(
            {
                "access_token": self.access_token,
                "refresh_token": self.refresh_token,
                "token_type": self.token_type,
                "expires_at": self.expires_at,
                "scope": self.scope,
            }
        ).encode()

    @classmethod
    def _from_bytes(cls, data: bytes) -> TokenSet:
        raw = json.loads(data)
        return cls(
            access_token=raw["access_token"],
            refresh_token=raw.get("refresh_token"),
            token_type=raw.get("token_type") or "Bearer",
            expires_at=raw.get("expires_at"),
            scope=raw.get("scope"),
        )


class TokenVault:
    """Encrypted storage for tokens and secrets. Build it with `TokenVault.open(...)`."""

    def __init__(self, engine: Engine, fernet: MultiFernet, clock: Callable[[], float] = time.time) -> None:
        self._engine = engine
        self._fernet = fernet
        self._clock = clock

    def __repr__(self) -> str:
        return f"TokenVault(engine={self._engine.url.render_as_string(hide_password=True)!r})"

    @staticmethod
    def generate_key() -> str:
        return Fernet.generate_key().decode()

    @classmethod
    def open(
        cls, engine: Engine, key: str | SecretStr | None, production: bool, *, data_dir: Path | None = None
    ) -> TokenVault:
        """Opens the vault, creating its tables. Raises `ConfigError` when no usable key can be had."""
        if isinstance(key, SecretStr):
            key = key.get_secret_value()
        if key is None or not key.strip():
            if production:
                raise ConfigError(
                    "a vault key is required in production: set it to a Fernet key "
                    "(`python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key())'`)"
                )
            if data_dir is None:
                raise ConfigError("no vault key configured and no data directory to keep a local key in")
            key = _local_key(default_key_file(data_dir), legacy=data_dir / KEY_FILE_NAME)
        vault = cls(engine, _multi_fernet(key))
        create_tables(metadata, engine)
        vault._check_key()
        return vault

    # -- raw encryption (for short-lived values kept in other tables, e.g. PKCE verifiers) --

    def encrypt(self, data: bytes) -> bytes:
        return self._fernet.encrypt(data)

    def decrypt(self, data: bytes) -> bytes:
        try:
            return self._fernet.decrypt(data)
        except InvalidToken as exc:
            raise VaultError("a stored value cannot be decrypted with the configured vault keys") from exc

    # -- OAuth tokens --

    def put_token(self, team: str, user: str, source: str, token: TokenSet) -> None:
        with self._engine.begin() as conn:
            self._put(conn, vault_tokens, (team, user, source), self.encrypt(token._to_bytes()))

    def get_token(self, team: str, user: str, source: str) -> TokenSet | None:
        blob = self._get(vault_tokens, (team, user, source))
        return None if blob is None else TokenSet._from_bytes(self.decrypt(blob))

    def delete_token(self, team: str, user: str, source: str) -> bool:
        return self._delete(vault_tokens, (team, user, source))

    # -- connector secrets entered by admins --

    def put_secret(self, name: str, value: str | SecretStr) -> None:
        _check_name(name)
        plain = value.get_secret_value() if isinstance(value, SecretStr) else value
        with self._engine.begin() as conn:
            self._put(conn, vault_secrets, (name,), self.encrypt(plain.encode()))

    def get_secret(self, name: str) -> SecretStr | None:
        _check_name(name)
        blob = self._get(vault_secrets, (name,))
        return None if blob is None else SecretStr(self.decrypt(blob).decode())

    def delete_secret(self, name: str) -> bool:
        _check_name(name)
        return self._delete(vault_secrets, (name,))

    # -- keys --

    def rotate(self) -> int:
        """Re-encrypts every stored value with the first (newest) key; returns how many were rewritten."""
        count = 0
        with self._engine.begin() as conn:
            for table, keys in _KEYS.items():
                rows = conn.execute(select(table)).mappings().all()
                for row in rows:
                    where = [table.c[k] == row[k] for k in keys]
                    try:
                        blob = self._fernet.rotate(row["ciphertext"])
                    except InvalidToken as exc:
                        raise VaultError(
                            "a stored value cannot be decrypted with the configured keys"
                        ) from exc
                    conn.execute(update(table).where(*where).values(ciphertext=blob))
                    count += 1
        log.info("vault keys rotated", extra={"values": count})
        return count

    def _check_key(self) -> None:
        blob = self._get(vault_secrets, (_CHECK_NAME,))
        if blob is None:
            with self._engine.begin() as conn:
                self._put(conn, vault_secrets, (_CHECK_NAME,), self.encrypt(_CHECK_VALUE))
            return
        try:
            self._fernet.decrypt(blob)
        except InvalidToken as exc:
            raise ConfigError(
                "the vault key does not match the one the stored secrets were encrypted with "
                "(to rotate keys, list the new key first and keep the old one after it)"
            ) from exc

    def _get(self, table: Table, key: tuple[str, ...]) -> bytes | None:
        with self._engine.connect() as conn:
            return conn.execute(select(table.c.ciphertext).where(*_row(table, key))).scalar_one_or_none()

    def _delete(self, table: Table, key: tuple[str, ...]) -> bool:
        with self._engine.begin() as conn:
            return conn.execute(delete(table).where(*_row(table, key))).rowcount > 0

    def _put(self, conn: Connection, table: Table, key: tuple[str, ...], blob: bytes) -> None:
        """Replaces the row's ciphertext, or adds the row: tokens and secrets are written alike."""
        values = {"ciphertext": blob, "updated_at": self._clock()}
        if conn.execute(update(table).where(*_row(table, key)).values(**values)).rowcount == 0:
            conn.execute(insert(table).values(**dict(zip(_KEYS[table], key, strict=True)), **values))


def _row(table: Table, key: tuple[str, ...]) -> list[Any]:
    """The conditions that pick one row of a vault table by its primary key, given in `_KEYS` order."""
    return [table.c[name] == value for name, value in zip(_KEYS[table], key, strict=True)]


def _check_name(name: str) -> None:
    if not name or name.startswith("__"):
        raise ValueError("secret names must be non-empty and must not start with '__'")


def _multi_fernet(key: str) -> MultiFernet:
    parts = [part.strip() for part in key.split(",") if part.strip()]
    try:
        return MultiFernet([Fernet(part.encode()) for part in parts])
    except ValueError as exc:  # bad base64 or length; never echo the key
        raise ConfigError(
            "the vault key is not a valid Fernet key (32 url-safe base64-encoded bytes)"
        ) from exc


def default_key_file(data_dir: Path) -> Path:
    """Where the development key lives: `$XDG_CONFIG_HOME/sleuth/vault.key` (or `~/.config/...`), one per user
    account, whatever the data directory (a copied one still opens; it just does not carry its key)."""
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "sleuth" / KEY_FILE_NAME


def _local_key(path: Path, *, legacy: Path) -> str:
    """Reads or creates the key file `path` (0600), first moving a `legacy` one there. Development only."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if legacy.exists():
        if path.exists():  # another data directory made the user's key first: keep this one's own
            log.warning("the vault key file is still in the data directory", extra={"path": str(legacy)})
            return _read_key(legacy)
        os.replace(legacy, path)
        log.warning("moved the local vault key out of the data directory", extra={"path": str(path)})
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise ConfigError(f"the vault key file {path} is readable by others: chmod 600 it") from None
        log.warning("no vault key configured; using the local key file", extra={"path": str(path)})
        return _read_key(path)
    with os.fdopen(fd, "w") as handle:
        handle.write(Fernet.generate_key().decode() + "\n")
    log.warning("no vault key configured; created a local key file", extra={"path": str(path)})
    return _read_key(path)


def _read_key(path: Path) -> str:
    key = path.read_text().strip()
    if not key:  # another process created the file and has not written it yet, or it was emptied
        raise ConfigError(f"the vault key file {path} is empty: remove it to have a new key made")
    return key
