"""Account linking: a Slack user connects their account on a source through OAuth 2.0 authorization code
with PKCE.

`start()` mints a state (bound to team, user, source, the PKCE verifier and the user's Slack-verified email)
and returns the provider's authorize URL; the provider sends the browser to Sleuth's `/oauth/callback`
(`bot.oauth_routes`), which calls `complete()`. The link URL can be forwarded, so whoever signs in at the
provider is not trusted to be the Slack user: the account is linked only when the provider says its email is
verified and it is the email Slack verified for the user who started the link; otherwise the grant is revoked
and the page says which account met which Slack user (`LinkRefused`). `identities()` hands the resolver a fresh `LinkedIdentity` per working link, refreshing tokens
(and persisting them) as needed; a link whose refresh fails with `invalid_grant` or whose token the provider
rejects is marked expired and reported as a `LinkProblem`, never raised. `unlink()` revokes at the provider
(RFC 7009).

Errors (errors.py): `InvalidLinkState` for any bad state, `LinkFailed` (`LinkRefused`), `UnknownSource`.

Table `oauth_links`: (team, user, source) -> account, groups (JSON), status ("active" | "expired"), linked_at,
updated_at. Tokens live in the vault, never here.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from sqlalchemy import Column, Engine, Float, String, Text, delete, insert, select, update

from bot.identity.errors import InvalidLinkState, LinkFailed, LinkProblem, LinkRefused, UnknownSource
from bot.identity.slack_signin import SlackSignIn, SlackSignInFailed
from bot.identity.states import Clock, StateStore
from bot.slack_columns import owner_columns
from bot.vault import TokenSet, TokenVault
from connectors.base import LinkedIdentity
from connectors.database import create_tables, owned_table

if TYPE_CHECKING:
    from authlib.integrations.httpx_client import OAuth2Client


class _OAuthKit(NamedTuple):
    client: Any  # authlib's OAuth2Client
    oauth_error: Any  # authlib.integrations.httpx_client.OAuthError (has .error)
    http_error: type[Exception]


@functools.cache
def _oauth() -> _OAuthKit:
    """authlib and its HTTP stack, imported on first use: they take a quarter of a second to import, and
    only linking needs them (not every CLI command that reads Settings). `except _oauth().oauth_error` is
    evaluated only when something is raised."""
    from authlib.integrations.httpx_client import OAuth2Client, OAuthError

    try:
        import httpx2 as http  # what authlib's httpx integration uses when it is installed
    except ImportError:  # pragma: no cover - authlib falls back to httpx
        import httpx as http  # type: ignore[no-redef]
    return _OAuthKit(OAuth2Client, OAuthError, http.HTTPError)


log = logging.getLogger(__name__)

ACTIVE, EXPIRED = "active", "expired"

oauth_links = owned_table(
    "oauth_links",
    *owner_columns(primary_key=True),
    Column("account", String(320), nullable=False),
    Column("groups", Text, nullable=False, default="[]"),
    Column("status", String(16), nullable=False),
    Column("linked_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)


class OAuthSourceConfig(BaseModel):
    """How to reach one source's OAuth 2.0 provider. Plain values; built by the caller from its settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str  # the connector's name, e.g. "acme" (the one in `/sleuth link acme`)
    client_id: str
    client_secret: SecretStr
    authorize_url: str
    token_url: str
    revoke_url: str | None = None  # RFC 7009 endpoint; None: unlinking only forgets the token
    userinfo_url: str  # answers {sub, email?, groups?} for a bearer token
    scopes: tuple[str, ...] = ()
    display_name: str | None = None  # "Acme" in messages; defaults to the source name capitalised
    # How a link is bound to the Slack user who asked for it: "email" (the provider's verified email is the one
    # Slack verified) or "slack" (the finishing browser signs in with Slack first; for accounts whose emails
    # differ; needs SLEUTH_SLACK_CLIENT_ID / SECRET).
    binding: Literal["email", "slack"] = "email"
    authorize_params: dict[str, str] = Field(default_factory=dict)  # extra query of the authorize URL
    # "google": Google's endpoints, OpenID scopes plus Drive's metadata scope, and the offline access that
    # gets a refresh token, unless given here (`{"source": "drive", "provider": "google", "client_id": ...}`)
    provider: Literal["generic", "google"] = "generic"

    @model_validator(mode="before")
    @classmethod
    def _provider_defaults(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("provider") == "google":
            return {**GOOGLE_OAUTH, "display_name": "Google Drive", **data}
        return data

    @property
    def label(self) -> str:
        return self.display_name or self.source.capitalize()


GOOGLE_OAUTH: dict[str, Any] = {
    "authorize_url": "https://accounts.google.com/o/oauth2/v2/auth",
    "token_url": "https://oauth2.googleapis.com/token",
    "revoke_url": "https://oauth2.googleapis.com/revoke",
    "userinfo_url": "https://openidconnect.googleapis.com/v1/userinfo",  # {sub, email, email_verified}
    "scopes": ("openid", "email", "https://www.googleapis.com/auth/drive.metadata.readonly"),
    "authorize_params": {"access_type": "offline", "prompt": "consent"},
}


@dataclass(frozen=True)
class LinkResult:
    team: str
    user: str
    source: str
    label: str
    account: str
    slack_email: str | None = None

    def message(self) -> str:
        """What the browser that completed the link is told: which account went to which Slack user."""
        who = f"{self.user} ({self.slack_email})" if self.slack_email else self.user
        return f"Linked the {self.label} account {self.account} to the Slack user {who}."


@dataclass(frozen=True)
class _Profile:
    """What the provider's userinfo says: its own account id, the email (and whether it verified it), groups."""

    account_id: str
    email: str | None
    email_verified: bool
    groups: list[str]

    @property
    def display(self) -> str:
        return self.email or self.account_id

    def verified_email(self) -> str | None:
        return self.email.strip().lower() if self.email and self.email_verified else None


@dataclass(frozen=True)
class LinkInfo:
    source: str
    account: str
    status: str  # "active" | "expired"
    linked_at: float
    groups: tuple[str, ...] = ()


class _TokenRejected(Exception):
    """The provider rejected the token or the refresh token (401, invalid_grant)."""


class _Unreachable(Exception):
    """The provider could not be asked (connection error, 5xx, garbage)."""


class AccountLinker:
    """Links, refreshes and unlinks users' accounts on OAuth sources."""

    def __init__(
        self,
        engine: Engine,
        vault: TokenVault,
        sources: Iterable[OAuthSourceConfig],
        *,
        redirect_uri: str,
        clock: Clock = time.time,
        state_ttl_s: float = 600.0,
        http_timeout_s: float = 10.0,
        slack_signin: SlackSignIn | None = None,
    ) -> None:
        self._engine, self._vault, self._clock = engine, vault, clock
        self._slack = slack_signin
        self._sources = {config.source: config for config in sources}
        self._redirect_uri = redirect_uri
        self._timeout = http_timeout_s
        self._states = StateStore(engine, vault, clock, state_ttl_s)
        self._listeners: list[Callable[[str, str], None]] = []
        create_tables(oauth_links.metadata, engine)

    def __repr__(self) -> str:
        return f"AccountLinker(sources={sorted(self._sources)!r})"

    @property
    def sources(self) -> list[OAuthSourceConfig]:
        return list(self._sources.values())

    def source(self, name: str) -> OAuthSourceConfig:
        try:
            return self._sources[name]
        except KeyError:
            raise UnknownSource(name) from None

    def on_change(self, listener: Callable[[str, str], None]) -> None:
        """`listener(team, user)` runs after a link of that user is made, removed or found expired."""
        self._listeners.append(listener)

    # -- linking --

    def start(
        self, team: str, user: str, source: str, *, slack_email: str | None, login_hint: str | None = None
    ) -> str:
        """Returns the provider's authorize URL for this user; its state is single-use and short-lived.

        `slack_email` is the user's email as Slack verified it (the bot's own users.info call); without one
        no account can be bound to the user, and `LinkFailed` says so."""
        config = self.source(source)
        if config.binding == "slack":
            if self._slack is None:
                raise LinkFailed(config.source, config.label, "slack_signin_not_configured")
            state, _ = self._states.mint(team, user, source, slack_email)
            log.info("link started", extra={"team": team, "user": user, "source": source, "binding": "slack"})
            return self._slack.start_url(state)
        if not slack_email:
            raise LinkRefused(
                config.source,
                config.label,
                "no_slack_email",
                f"Slack did not give me a verified email for you, so I can't link a {config.label} account.",
            )
        state, verifier = self._states.mint(team, user, source, slack_email.strip().lower())
        extra = config.authorize_params | ({"login_hint": login_hint} if login_hint else {})
        with self._client(config, scope=" ".join(config.scopes) or None) as client:
            url, _ = client.create_authorization_url(
                config.authorize_url, state=state, code_verifier=verifier, **extra
            )
        log.info("link started", extra={"team": team, "user": user, "source": source})
        return str(url)

    def begin_proof(self, state: str) -> tuple[str, str]:
        """For a "slack"-bound link: (Slack's sign-in URL, a secret for the browser's cookie)."""
        config = self._sources.get(self._states.peek(state).source)
        if config is None or config.binding != "slack" or self._slack is None:
            raise InvalidLinkState()
        return self._slack.authorize_url(state), self._states.begin_proof(state)

    def finish_proof(self, *, state: str, code: str | None, error: str | None, browser: str | None) -> str:
        """Slack says who signed in in this browser; if it is the user who asked for the link, spends the link
        state and returns the provider's authorize URL with a state and PKCE verifier minted for this browser
        alone. Raises `InvalidLinkState`, `LinkFailed` or `LinkRefused`."""
        pending = self._states.peek(state)
        config = self._sources.get(pending.source)
        if config is None or config.binding != "slack" or self._slack is None:
            raise InvalidLinkState()
        if error or not code:
            raise LinkFailed(config.source, config.label, (error or "missing_code")[:64])
        try:
            team, user = self._slack.user(code)
        except SlackSignInFailed as exc:
            raise LinkFailed(config.source, config.label, f"slack_signin:{exc}"[:64]) from None
        if (team, user) != (pending.team, pending.user):
            self._states.consume(state)  # a forwarded link is spent, not left for another try
            message = (
                f"You signed in to Slack as {user}, but this {config.label} link was started by Slack user "
                f"{pending.user}. Nothing was linked. If someone sent you this link, tell your Slack admin; to "
                f"link your own account run `/sleuth link {config.source}`."
            )
            raise LinkRefused(config.source, config.label, "slack_user_mismatch", message)
        if not browser or not self._states.prove(state, browser):
            raise LinkRefused(
                config.source, config.label, "wrong_browser", _WRONG_BROWSER.format(label=config.label)
            )
        step, verifier = self._states.hand_over(state, browser)  # the link state is spent here
        with self._client(config, scope=" ".join(config.scopes) or None) as client:
            url, _ = client.create_authorization_url(
                config.authorize_url, state=step, code_verifier=verifier, **config.authorize_params
            )
        return str(url)

    def complete(
        self, *, state: str, code: str | None, error: str | None = None, browser: str | None = None
    ) -> LinkResult:
        """Finishes a link from the callback's query (`browser`: the sign-in cookie, for "slack"-bound
        sources). Raises `InvalidLinkState` or `LinkFailed`."""
        pending = self._states.consume(state)
        config = self._sources.get(pending.source)
        if config is None:
            raise InvalidLinkState()  # the source was removed from the configuration meanwhile
        if config.binding == "slack" and not pending.for_browser(browser):  # minted for this browser only
            raise LinkRefused(
                config.source, config.label, "not_proven", _WRONG_BROWSER.format(label=config.label)
            )
        if error or not code:
            raise LinkFailed(config.source, config.label, (error or "missing_code")[:64])
        with self._client(config) as client:
            try:
                raw = client.fetch_token(
                    config.token_url,
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=pending.code_verifier,
                )
            except _oauth().oauth_error as exc:
                raise LinkFailed(config.source, config.label, exc.error) from None
            except (_oauth().http_error, ValueError) as exc:
                raise LinkFailed(config.source, config.label, type(exc).__name__) from None
            token = TokenSet.from_response(raw, self._clock())
            try:
                profile = self._userinfo(client, config, token)
            except (_TokenRejected, _Unreachable) as exc:
                self._revoke(config, token)  # a grant we cannot use is not kept at the provider either
                raise LinkFailed(config.source, config.label, type(exc).__name__) from None
        refusal = (
            None
            if config.binding == "slack"  # this browser's user proved at Slack to be the one who asked
            else _refusal(config.source, config.label, pending.user, pending.slack_email, profile)
        )
        if refusal is not None:
            self._revoke(config, token)
            log.warning(
                "link refused",
                extra={
                    "team": pending.team,
                    "user": pending.user,
                    "source": config.source,
                    "reason": refusal.reason,
                },
            )
            raise refusal
        account, groups = profile.display, profile.groups
        previous = self._vault.get_token(pending.team, pending.user, config.source)
        self._vault.put_token(pending.team, pending.user, config.source, token)
        self._save_link(pending.team, pending.user, config.source, account, groups)
        if previous is not None and previous.refresh_token != token.refresh_token:
            self._revoke(config, previous)
        log.info(
            "account linked", extra={"team": pending.team, "user": pending.user, "source": config.source}
        )
        self._changed(pending.team, pending.user)
        return LinkResult(
            pending.team, pending.user, config.source, config.label, account, pending.slack_email
        )

    def unlink(self, team: str, user: str, source: str) -> bool:
        """Revokes the grant at the provider (best effort) and forgets it. True if there was a link."""
        config = self._sources.get(source)
        token = self._vault.get_token(team, user, source)
        if config is not None and token is not None:
            self._revoke(config, token)
        removed = self._vault.delete_token(team, user, source)
        with self._engine.begin() as conn:
            removed = (
                conn.execute(delete(oauth_links).where(*_key(team, user, source))).rowcount > 0 or removed
            )
        log.info("account unlinked", extra={"team": team, "user": user, "source": source, "removed": removed})
        self._changed(team, user)
        return removed

    def links(self, team: str, user: str) -> list[LinkInfo]:
        query = select(oauth_links).where(oauth_links.c.team == team, oauth_links.c.user == user)
        with self._engine.connect() as conn:
            rows = conn.execute(query.order_by(oauth_links.c.source)).mappings().all()
        return [
            LinkInfo(r["source"], r["account"], r["status"], r["linked_at"], tuple(json.loads(r["groups"])))
            for r in rows
        ]

    # -- use --

    def identities(self, team: str, user: str) -> tuple[list[LinkedIdentity], list[LinkProblem]]:
        """One verified identity per working link (tokens refreshed as needed), a problem per broken one."""
        found: list[LinkedIdentity] = []
        problems: list[LinkProblem] = []
        for link in self.links(team, user):
            config = self._sources.get(link.source)
            if config is None:
                continue  # a source no longer configured contributes nothing
            if link.status != ACTIVE:
                problems.append(self.expired_problem(config.source))
                continue
            try:
                found.append(self._identity(team, user, config, link))
            except _TokenRejected:
                problems.append(self.mark_expired(team, user, config.source))
            except _Unreachable:
                log.warning("provider unreachable", extra={"source": config.source})
                problems.append(LinkProblem(config.source, _unreachable_message(config)))
        return found, problems

    def mark_expired(self, team: str, user: str, source: str) -> LinkProblem:
        """Records that the source no longer accepts this user's grant (e.g. a connector got a 401); the dead
        token is dropped from the vault; the link stays listed as expired until relinked or unlinked."""
        self._vault.delete_token(team, user, source)
        with self._engine.begin() as conn:
            conn.execute(
                update(oauth_links)
                .where(*_key(team, user, source))
                .values(status=EXPIRED, updated_at=self._clock())
            )
        log.warning("link expired", extra={"team": team, "user": user, "source": source})
        self._changed(team, user)
        return self.expired_problem(source)

    def expired_problem(self, source: str) -> LinkProblem:
        label = self._sources[source].label if source in self._sources else source
        return LinkProblem(source, f"Your {label} link expired — run `/sleuth link {source}` to reconnect.")

    def _identity(self, team: str, user: str, config: OAuthSourceConfig, link: LinkInfo) -> LinkedIdentity:
        token = self._vault.get_token(team, user, config.source)
        if token is None:
            raise _TokenRejected()
        with self._client(config) as client:
            if token.expired(self._clock()):
                token = self._refresh(client, team, user, config, token)
            try:
                profile = self._userinfo(client, config, token)
            except _TokenRejected:  # expired or revoked early at the provider: one refresh, then give up
                token = self._refresh(client, team, user, config, token)
                profile = self._userinfo(client, config, token)
        account, groups = profile.display, profile.groups
        if (account, tuple(groups)) != (link.account, link.groups):  # the provider's profile changed
            self._save_link(team, user, config.source, account, groups, linked_at=link.linked_at)
        return LinkedIdentity(
            source=config.source,
            account=profile.account_id,
            email=profile.verified_email(),
            access_token=token.access_token,
            groups=tuple(groups),
        )

    def _refresh(
        self, client: OAuth2Client, team: str, user: str, config: OAuthSourceConfig, token: TokenSet
    ) -> TokenSet:
        if not token.refresh_token:
            raise _TokenRejected()
        saved: list[TokenSet] = []

        def persist(
            new: dict[str, Any], refresh_token: str | None = None, access_token: str | None = None
        ) -> None:
            fresh = TokenSet.from_response(new, self._clock(), refresh_token=refresh_token)
            self._vault.put_token(team, user, config.source, fresh)
            saved.append(fresh)

        client.update_token = persist
        try:
            client.refresh_token(config.token_url, refresh_token=token.refresh_token)
        except _oauth().oauth_error as exc:
            if exc.error not in ("invalid_grant", "unauthorized_client", "invalid_client"):
                raise _Unreachable() from None
            current = self._vault.get_token(team, user, config.source)  # another worker may have rotated it
            if current is not None and current.refresh_token not in (None, token.refresh_token):
                return current
            raise _TokenRejected() from None
        except (_oauth().http_error, ValueError):
            raise _Unreachable() from None
        finally:
            client.update_token = None
        if not saved:
            raise _Unreachable()
        log.info("token refreshed", extra={"team": team, "user": user, "source": config.source})
        return saved[-1]

    def _userinfo(self, client: OAuth2Client, config: OAuthSourceConfig, token: TokenSet) -> _Profile:
        try:
            response = client.request(
                "GET",
                config.userinfo_url,
                withhold_token=True,
                headers={"Authorization": f"Bearer {token.access_token}", "Accept": "application/json"},
            )
        except _oauth().http_error:
            raise _Unreachable() from None
        if response.status_code == 401:
            raise _TokenRejected()
        if response.status_code != 200:
            raise _Unreachable()
        try:
            info = response.json()
        except ValueError:
            raise _Unreachable() from None
        if not isinstance(info, dict):
            raise _Unreachable()
        # The provider's own id: OpenID Connect's `sub`, GitHub's `login` (its ACLs name logins), else `id`.
        account = info.get("sub") or info.get("login") or info.get("id") or info.get("email") or ""
        email = info.get("email")
        if not isinstance(account, (str, int)) or not str(account):
            raise _Unreachable()
        groups = info.get("groups") or []
        return _Profile(
            account_id=str(account),
            email=email if isinstance(email, str) and email else None,
            email_verified=info.get("email_verified") is True,
            groups=[str(g) for g in groups] if isinstance(groups, list) else [],
        )

    def _revoke(self, config: OAuthSourceConfig, token: TokenSet) -> None:
        if not config.revoke_url:
            return
        with self._client(config) as client:
            for value, hint in ((token.refresh_token, "refresh_token"), (token.access_token, "access_token")):
                if not value:
                    continue
                try:
                    response = client.revoke_token(config.revoke_url, token=value, token_type_hint=hint)
                except _oauth().http_error:
                    response = None
                if response is None or response.status_code != 200:
                    log.warning("token revocation failed", extra={"source": config.source, "hint": hint})

    def _save_link(
        self,
        team: str,
        user: str,
        source: str,
        account: str,
        groups: list[str],
        linked_at: float | None = None,
    ) -> None:
        now = self._clock()
        values = {
            "account": account,
            "groups": json.dumps(groups),
            "status": ACTIVE,
            "linked_at": linked_at or now,
            "updated_at": now,
        }
        with self._engine.begin() as conn:
            if (
                conn.execute(update(oauth_links).where(*_key(team, user, source)).values(**values)).rowcount
                == 0
            ):
                conn.execute(insert(oauth_links).values(team=team, user=user, source=source, **values))

    @contextmanager
    def _client(self, config: OAuthSourceConfig, scope: str | None = None) -> Iterator[OAuth2Client]:
        client = _oauth().client(
            client_id=config.client_id,
            client_secret=config.client_secret.get_secret_value(),
            scope=scope,
            redirect_uri=self._redirect_uri,
            code_challenge_method="S256",
            timeout=self._timeout,
        )
        try:
            yield client
        finally:
            client.close()

    def _changed(self, team: str, user: str) -> None:
        for listener in self._listeners:
            listener(team, user)


def _key(team: str, user: str, source: str) -> tuple[Any, ...]:
    return (oauth_links.c.team == team, oauth_links.c.user == user, oauth_links.c.source == source)


_WRONG_BROWSER = (
    "This {label} link has to be finished in the browser that signed in to Slack as the person who asked for "
    "it. Nothing was linked. Run `/sleuth link` again and open the new link yourself."
)


def would_link(slack_email: str | None, provider_email: str | None, verified: bool) -> bool:
    """The binding rule alone: would an account whose provider email is `provider_email` (verified or not) be
    linked to the Slack user whose verified email is `slack_email`? (`sleuth audit permissions` probes it.)"""
    profile = _Profile(account_id="probe", email=provider_email, email_verified=verified, groups=[])
    return _refusal("probe", "Probe", "probe", (slack_email or "").strip().lower() or None, profile) is None


def _refusal(
    source: str, label: str, user: str, slack_email: str | None, profile: _Profile
) -> LinkRefused | None:
    """Why this account may not be linked to the Slack user who started the link, or None."""
    shown = profile.display
    if profile.verified_email() is None:
        message = (
            f"{label} has not verified an email for the account {shown}, so it cannot be matched to the "
            f"Slack user {user}. Nothing was linked."
        )
        return LinkRefused(source, label, "email_not_verified", message)
    if slack_email is None or profile.verified_email() != slack_email:
        message = (
            f"You signed in to {label} as {shown}, but this link was started in Slack by another person "
            f"(Slack user {user}), whose verified email is not {shown}. Nothing was linked. If someone sent you "
            f"this link, tell your Slack admin; to link your own account run `/sleuth link {source}`."
        )
        return LinkRefused(source, label, "email_mismatch", message)
    return None


def _unreachable_message(config: OAuthSourceConfig) -> str:
    return (
        f"I couldn't reach {config.label} to check your access, so I used only what everyone may see there."
    )
