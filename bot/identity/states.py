"""OAuth `state` values: minted by the server, single-use, short-lived, bound to (team, user, source), to
the PKCE verifier and to the Slack-verified email of the user who started the link (the account linked must
carry the same verified email). Only a hash of the state is stored; the verifier and email are encrypted by
the vault.

Table `oauth_states`: state_hash (sha256 hex) -> team, user, source, verifier_ct, created_at, expires_at.

Where a source binds links by a Slack sign-in instead of by email, `oauth_proofs` holds, per link state, a hash
of the secret cookie given to the browser that started the sign-in (`begin_proof`, `prove`). Once Slack confirms
that browser's user, the link state is spent and `hand_over` mints the provider step's own state and PKCE
verifier for *that browser* (its cookie's hash is kept, encrypted, with the verifier): the state the provider
sees never appeared in Slack or in the link URL, and the callback takes it only from the browser it was minted
for, so a code obtained elsewhere (for that state or for the link's) links nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from bot.identity.errors import InvalidLinkState
from bot.slack_columns import owner_columns
from bot.vault import TokenVault
from connectors.database import create_tables

Clock = Callable[[], float]

metadata = sa.MetaData()

# Not kept in the vault: a state is single-use and expires; the vault keeps tokens until they are unlinked.
oauth_states = sa.Table(
    "oauth_states",
    metadata,
    sa.Column("state_hash", sa.String(64), primary_key=True),
    *owner_columns(primary_key=False),
    sa.Column("verifier_ct", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False, index=True),
)


oauth_proofs = sa.Table(
    "oauth_proofs",
    metadata,
    sa.Column("state_hash", sa.String(64), primary_key=True),
    sa.Column("browser_hash", sa.String(64), nullable=False),
    sa.Column("proven", sa.Boolean, nullable=False, default=False),
    sa.Column("expires_at", sa.Float, nullable=False, index=True),
)


@dataclass(frozen=True)
class PendingLink:
    team: str
    user: str
    source: str
    code_verifier: str = field(repr=False)
    slack_email: str | None = field(default=None, repr=False)  # as Slack verified it when the link started
    browser_hash: str | None = field(default=None, repr=False)  # the browser a provider step was minted for

    def for_browser(self, browser: str | None) -> bool:
        """Whether `browser` (the sign-in cookie) is the one this provider step was minted for."""
        return bool(self.browser_hash and browser) and hmac.compare_digest(
            self.browser_hash, state_hash(browser or "")
        )


def state_hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


class StateStore:
    def __init__(self, engine: sa.Engine, vault: TokenVault, clock: Clock, ttl_s: float) -> None:
        self._engine, self._vault, self._clock, self._ttl_s = engine, vault, clock, ttl_s
        create_tables(metadata, engine)

    def mint(
        self,
        team: str,
        user: str,
        source: str,
        slack_email: str | None = None,
        *,
        browser_hash: str | None = None,
    ) -> tuple[str, str]:
        """Returns (state, code_verifier) for a new authorization request, and drops expired states."""
        state = secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(64)  # 86 chars of [A-Za-z0-9_-], within RFC 7636's 43..128
        now = self._clock()
        with self._engine.begin() as conn:
            conn.execute(sa.delete(oauth_states).where(oauth_states.c.expires_at <= now))
            conn.execute(
                sa.insert(oauth_states).values(
                    state_hash=state_hash(state),
                    team=team,
                    user=user,
                    source=source,
                    verifier_ct=self._vault.encrypt(
                        json.dumps(
                            {"verifier": verifier, "slack_email": slack_email, "browser": browser_hash}
                        ).encode()
                    ),
                    created_at=now,
                    expires_at=now + self._ttl_s,
                )
            )
        return state, verifier

    def peek(self, state: str) -> PendingLink:
        """The pending link without using it up (the Slack sign-in step reads it); `InvalidLinkState` if none."""
        if not state or len(state) > 256:
            raise InvalidLinkState()
        with self._engine.connect() as conn:
            row = (
                conn.execute(sa.select(oauth_states).where(oauth_states.c.state_hash == state_hash(state)))
                .mappings()
                .first()
            )
        if row is None or row["expires_at"] <= self._clock():
            raise InvalidLinkState()
        return self._pending(row)

    def begin_proof(self, state: str) -> str:
        """A fresh browser secret (for a cookie) bound to this state; a second start replaces the first."""
        self.peek(state)
        secret = secrets.token_urlsafe(32)
        key = state_hash(state)
        with self._engine.begin() as conn:
            conn.execute(sa.delete(oauth_proofs).where(oauth_proofs.c.state_hash == key))
            conn.execute(
                sa.insert(oauth_proofs).values(
                    state_hash=key,
                    browser_hash=state_hash(secret),
                    proven=False,
                    expires_at=self._clock() + self._ttl_s,
                )
            )
        return secret

    def prove(self, state: str, browser: str | None) -> bool:
        """Whether `browser` holds the secret this state's sign-in started with (the proof is then used up)."""
        with self._engine.begin() as conn:
            done = conn.execute(sa.delete(oauth_proofs).where(*self._proof_match(state, browser))).rowcount
        return bool(done)

    def hand_over(self, state: str, browser: str) -> tuple[str, str]:
        """Spends a proven link state and returns (state, code_verifier) for its provider step, bound to the
        browser holding `browser`: only that browser's callback can finish it (`PendingLink.for_browser`)."""
        pending = self.consume(state)
        return self.mint(
            pending.team,
            pending.user,
            pending.source,
            pending.slack_email,
            browser_hash=state_hash(browser),
        )

    def _proof_match(self, state: str, browser: str | None) -> tuple[Any, ...]:
        return (
            oauth_proofs.c.state_hash == state_hash(state),
            oauth_proofs.c.browser_hash == state_hash(browser or secrets.token_urlsafe(8)),
            oauth_proofs.c.expires_at > self._clock(),
        )

    def consume(self, state: str) -> PendingLink:
        """Takes the state out of the store (once, even under concurrency); raises `InvalidLinkState`."""
        if not state or len(state) > 256:
            raise InvalidLinkState()
        key = state_hash(state)
        with self._engine.begin() as conn:
            row = (
                conn.execute(sa.select(oauth_states).where(oauth_states.c.state_hash == key))
                .mappings()
                .first()
            )
            if row is None:
                raise InvalidLinkState()
            if conn.execute(sa.delete(oauth_states).where(oauth_states.c.state_hash == key)).rowcount != 1:
                raise InvalidLinkState()  # another request consumed it first
            conn.execute(sa.delete(oauth_proofs).where(oauth_proofs.c.state_hash == key))
        if row["expires_at"] <= self._clock():
            raise InvalidLinkState()
        return self._pending(row)

    def _pending(self, row: Any) -> PendingLink:
        try:
            secret = json.loads(self._vault.decrypt(row["verifier_ct"]))
            verifier, email, browser = (
                str(secret["verifier"]),
                secret.get("slack_email"),
                secret.get("browser"),
            )
        except (ValueError, TypeError, KeyError):
            raise InvalidLinkState() from None  # not a state this version minted
        return PendingLink(
            team=row["team"],
            user=row["user"],
            source=row["source"],
            code_verifier=verifier,
            slack_email=str(email) if email else None,
            browser_hash=str(browser) if browser else None,
        )
