"""Account linking over real HTTP: the local OAuth provider (authlib) on 127.0.0.1, Sleuth's callback served
by uvicorn on 127.0.0.1, the browser played by httpx."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import uvicorn
from pydantic import SecretStr
from sqlalchemy import Engine, select, update
from starlette.applications import Starlette

from bot.identity import AccountLinker, LinkFailed, LinkProblem, OAuthSourceConfig, PrincipalResolver
from bot.identity.states import oauth_states
from bot.oauth_routes import INVALID_STATE_MESSAGE, oauth_routes
from bot.vault import TokenVault, vault_tokens
from connectors.base import PUBLIC, LinkedIdentity, account_principal, group_principal, user_principal
from connectors.database import make_engine
from tests.servers.oauth_provider import OAuthProvider, ProviderUser

TEAM = "T0001"
ANN = ProviderUser(sub="acme-ann", email="ann@acme.io", groups=("eng", "oncall"))
BOB = ProviderUser(sub="acme-bob", email="bob@acme.io", groups=("sales",))
MALLORY = ProviderUser(sub="acme-mal", email="mallory@acme.io")
DANA = ProviderUser(sub="acme-dana", email="dana@acme.io", groups=("finance",))
UNVERIFIED = ProviderUser(sub="acme-eve", email="eve@acme.io", email_verified=False)
EXPIRED_MESSAGE = "Your Acme link expired — run `/sleuth link acme` to reconnect."


class FakeClock:
    def __init__(self, now: float = 1_900_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@contextmanager
def serve_asgi(app: Starlette, sock: socket.socket) -> Iterator[None]:
    """Serves `app` on an already listening socket; connections queue until uvicorn accepts them."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@dataclass
class Env:
    provider: OAuthProvider
    linker: AccountLinker
    resolver: PrincipalResolver
    vault: TokenVault
    engine: Engine
    clock: FakeClock
    callback_url: str


def principals_for(source: str, identity: LinkedIdentity) -> set[str]:
    found = {account_principal(source, identity.account)} | {
        group_principal(source, g) for g in identity.groups
    }
    return found | ({user_principal(identity.email)} if identity.email else set())


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    clock = FakeClock()
    engine = make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}")
    vault = TokenVault.open(engine, TokenVault.generate_key(), production=True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    callback_url = f"http://127.0.0.1:{sock.getsockname()[1]}/oauth/callback"
    try:
        with OAuthProvider(users=[ANN, BOB, MALLORY, DANA, UNVERIFIED], clock=clock) as provider:
            provider.add_client("sleuth", "s3cret", [callback_url])
            base = provider.base_url
            config = OAuthSourceConfig(
                source="acme",
                display_name="Acme",
                client_id="sleuth",
                client_secret=SecretStr("s3cret"),
                authorize_url=f"{base}/authorize",
                token_url=f"{base}/token",
                revoke_url=f"{base}/revoke",
                userinfo_url=f"{base}/userinfo",
                scopes=("openid", "email", "groups"),
            )
            linker = AccountLinker(engine, vault, [config], redirect_uri=callback_url, clock=clock)
            resolver = PrincipalResolver(linker, principals_for, ttl_s=60, clock=clock)
            with serve_asgi(Starlette(routes=oauth_routes(linker)), sock):
                yield Env(provider, linker, resolver, vault, engine, clock, callback_url)
    finally:
        sock.close()
        engine.dispose()


def browse(url: str, login: str | None = None, follow: bool = True) -> httpx.Response:
    headers = {"X-Test-Login": login} if login else {}
    with httpx.Client(follow_redirects=follow, timeout=10) as browser:
        return browser.get(url, headers=headers)


def provider_redirect(url: str, login: str) -> str:
    """Signs in at the provider and returns where it sends the browser (Sleuth's callback, code and state)."""
    response = browse(url, login, follow=False)
    assert response.status_code == 302, response.text
    return response.headers["location"]


def link(env: Env, user: str, person: ProviderUser) -> None:
    """`user` links their own account: Slack verified the same email the provider does."""
    url = env.linker.start(TEAM, user, "acme", slack_email=person.email, login_hint=person.email)
    response = browse(url)
    assert response.status_code == 200, response.text


def test_full_link_flow_stores_an_encrypted_token(env: Env) -> None:
    url = env.linker.start(TEAM, "U_ANN", "acme", slack_email=ANN.email, login_hint=ANN.email)
    query = parse_qs(urlsplit(url).query)
    assert query["code_challenge_method"] == ["S256"] and "code_verifier" not in query
    assert query["redirect_uri"] == [env.callback_url]

    response = browse(url)

    assert response.status_code == 200
    assert "Linked the Acme account ann@acme.io to the Slack user U_ANN (ann@acme.io)." in response.text
    assert response.headers["cache-control"] == "no-store"
    [info] = env.linker.links(TEAM, "U_ANN")
    assert (info.source, info.account, info.status) == ("acme", "ann@acme.io", "active")
    token = env.vault.get_token(TEAM, "U_ANN", "acme")
    assert token is not None and token.refresh_token
    with env.engine.connect() as conn:
        [ciphertext] = conn.execute(select(vault_tokens.c.ciphertext)).scalars().all()
        states_left = conn.execute(select(oauth_states)).all()
    assert token.access_token.encode() not in ciphertext
    assert token.refresh_token.encode() not in ciphertext
    assert states_left == []  # single use: consumed by the callback
    assert token.access_token not in repr(token) and token.refresh_token not in repr(token)


def test_replayed_forged_and_expired_states_get_one_generic_page(env: Env) -> None:
    callback = provider_redirect(env.linker.start(TEAM, "U_ANN", "acme", slack_email=ANN.email), ANN.email)
    assert browse(callback).status_code == 200

    replayed = browse(callback)
    forged = browse(f"{env.callback_url}?code=abc&state=forged-state")
    expired_url = env.linker.start(TEAM, "U_BOB", "acme", slack_email=BOB.email)
    env.clock.advance(601)
    expired = browse(expired_url, BOB.email)

    assert replayed.status_code == forged.status_code == expired.status_code == 400
    assert replayed.text == forged.text == expired.text
    assert INVALID_STATE_MESSAGE in replayed.text
    assert env.linker.links(TEAM, "U_BOB") == []


def test_state_bound_to_another_user_cannot_link_this_user(env: Env) -> None:
    ann_callback = provider_redirect(
        env.linker.start(TEAM, "U_ANN", "acme", slack_email=ANN.email), ANN.email
    )
    bob_callback = provider_redirect(
        env.linker.start(TEAM, "U_BOB", "acme", slack_email=BOB.email), BOB.email
    )
    bob_code = parse_qs(urlsplit(bob_callback).query)["code"][0]
    ann_state = parse_qs(urlsplit(ann_callback).query)["state"][0]

    # Bob's code presented with Ann's state: Ann's PKCE verifier does not match Bob's challenge.
    response = browse(f"{env.callback_url}?code={bob_code}&state={ann_state}")

    assert response.status_code == 400
    assert env.linker.links(TEAM, "U_ANN") == [] and env.linker.links(TEAM, "U_BOB") == []
    assert browse(ann_callback).status_code == 400  # Ann's state is spent either way
    # A state always links the user it was minted for, whoever's browser presents it.
    assert browse(bob_callback).status_code == 200
    assert [i.account for i in env.linker.links(TEAM, "U_BOB")] == ["bob@acme.io"]
    assert env.linker.links(TEAM, "U_ANN") == []


def test_tampered_verifier_is_rejected_by_the_provider(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    url = env.linker.start(TEAM, "U_ANN", "acme", slack_email=ANN.email)
    with env.engine.begin() as conn:
        tampered = json.dumps({"verifier": "x" * 64, "slack_email": ANN.email}).encode()
        conn.execute(update(oauth_states).values(verifier_ct=env.vault.encrypt(tampered)))

    with caplog.at_level(logging.WARNING, logger="bot.oauth_routes"):
        response = browse(url, ANN.email)

    assert response.status_code == 400
    assert "Linking Acme did not finish" in response.text
    assert [r.reason for r in caplog.records if hasattr(r, "reason")] == ["invalid_grant"]
    assert env.provider.token_requests == ["authorization_code"]
    assert env.linker.links(TEAM, "U_ANN") == []


def test_denied_at_the_provider(env: Env) -> None:
    response = browse(env.linker.start(TEAM, "U_ANN", "acme", slack_email=ANN.email), "deny")
    assert response.status_code == 400 and "Linking Acme did not finish" in response.text
    assert env.linker.links(TEAM, "U_ANN") == []


def test_resolve_uses_the_linked_identity(env: Env) -> None:
    link(env, "U_ANN", ANN)
    resolved = env.resolver.resolve(TEAM, "U_ANN", "Ann@Acme.io")
    assert resolved.principals == {
        PUBLIC,
        "user:ann@acme.io",
        "user:acme:acme-ann",
        "group:acme:eng",
        "group:acme:oncall",
    }
    assert resolved.problems == []


def test_expired_access_token_is_refreshed_and_persisted(env: Env) -> None:
    link(env, "U_ANN", ANN)
    before = env.vault.get_token(TEAM, "U_ANN", "acme")
    env.clock.advance(3601)  # past the provider's 1 h lifetime, on both sides

    resolved = env.resolver.resolve(TEAM, "U_ANN", ANN.email)

    after = env.vault.get_token(TEAM, "U_ANN", "acme")
    assert before is not None and after is not None
    assert "group:acme:eng" in resolved.principals and resolved.problems == []
    assert after.access_token != before.access_token and after.refresh_token != before.refresh_token
    assert after.expires_at == env.clock.now + 3600
    assert env.provider.token_requests == ["authorization_code", "refresh_token"]


def test_token_rejected_by_the_provider_is_refreshed(env: Env) -> None:
    link(env, "U_ANN", ANN)
    before = env.vault.get_token(TEAM, "U_ANN", "acme")
    env.provider.expire_access_tokens(ANN.email)  # early expiry the client cannot see: the provider says 401

    resolved = env.resolver.resolve(TEAM, "U_ANN", ANN.email)

    after = env.vault.get_token(TEAM, "U_ANN", "acme")
    assert "group:acme:eng" in resolved.principals and resolved.problems == []
    assert before is not None and after is not None and after.access_token != before.access_token


@pytest.mark.parametrize("later_s", [0, 3601], ids=["rejected-by-provider", "expired-by-clock"])
def test_revoked_refresh_token_degrades_to_public_only(env: Env, later_s: float) -> None:
    link(env, "U_ANN", ANN)
    env.provider.revoke_tokens(ANN.email)  # revoked at the provider: userinfo 401 / refresh invalid_grant
    env.clock.advance(later_s)

    resolved = env.resolver.resolve(TEAM, "U_ANN", ANN.email)

    assert resolved.principals == {PUBLIC, "user:ann@acme.io"}
    assert resolved.problems == [LinkProblem("acme", EXPIRED_MESSAGE)]
    assert [i.status for i in env.linker.links(TEAM, "U_ANN")] == ["expired"]
    assert env.vault.get_token(TEAM, "U_ANN", "acme") is None
    # Later questions hear the same, without asking the provider again.
    env.clock.advance(120)
    again = env.resolver.resolve(TEAM, "U_ANN", ANN.email)
    assert again.problems == [LinkProblem("acme", EXPIRED_MESSAGE)]
    assert env.provider.token_requests == ["authorization_code", "refresh_token"]
    # Relinking fixes it.
    link(env, "U_ANN", ANN)
    assert "group:acme:eng" in env.resolver.resolve(TEAM, "U_ANN", ANN.email).principals


def test_unlink_revokes_and_clears_the_cache(env: Env) -> None:
    link(env, "U_ANN", ANN)
    token = env.vault.get_token(TEAM, "U_ANN", "acme")
    assert token is not None
    assert "group:acme:eng" in env.resolver.resolve(TEAM, "U_ANN", ANN.email).principals

    assert env.linker.unlink(TEAM, "U_ANN", "acme") is True

    assert env.provider.revoked == [token.refresh_token, token.access_token]
    assert env.provider.active_tokens(ANN.email) == 0
    assert env.vault.get_token(TEAM, "U_ANN", "acme") is None
    assert env.linker.links(TEAM, "U_ANN") == []
    resolved = env.resolver.resolve(TEAM, "U_ANN", ANN.email)  # well within the cache TTL
    assert resolved.principals == {PUBLIC, "user:ann@acme.io"} and resolved.problems == []
    assert env.linker.unlink(TEAM, "U_ANN", "acme") is False


def test_relink_revokes_the_old_grant(env: Env) -> None:
    link(env, "U_ANN", ANN)
    old = env.vault.get_token(TEAM, "U_ANN", "acme")
    link(env, "U_ANN", ANN)
    new = env.vault.get_token(TEAM, "U_ANN", "acme")
    assert old is not None and new is not None and old.refresh_token in env.provider.revoked
    assert new.refresh_token not in env.provider.revoked
    assert [i.account for i in env.linker.links(TEAM, "U_ANN")] == ["ann@acme.io"]
    assert "group:acme:eng" in env.resolver.resolve(TEAM, "U_ANN", ANN.email).principals


def test_forwarded_link_completed_by_someone_else_links_nothing(env: Env) -> None:
    """Mallory runs `/sleuth link acme` and forwards the URL; Dana signs in. Nothing of Dana's reaches Mallory."""
    url = env.linker.start(TEAM, "U_MAL", "acme", slack_email=MALLORY.email)

    response = browse(url, DANA.email)

    assert response.status_code == 400
    assert "dana@acme.io" in response.text and "U_MAL" in response.text
    assert "Nothing was linked" in response.text and "mallory@acme.io" not in response.text
    assert env.linker.links(TEAM, "U_MAL") == []
    assert env.vault.get_token(TEAM, "U_MAL", "acme") is None
    assert env.provider.active_tokens(DANA.email) == 0  # Dana's grant is revoked, not kept
    resolved = env.resolver.resolve(TEAM, "U_MAL", MALLORY.email)
    assert resolved.principals == {PUBLIC, "user:mallory@acme.io"}


def test_email_the_provider_has_not_verified_links_nothing(env: Env) -> None:
    url = env.linker.start(TEAM, "U_EVE", "acme", slack_email=UNVERIFIED.email)
    response = browse(url, UNVERIFIED.email)
    assert response.status_code == 400 and "not verified" in response.text
    assert env.linker.links(TEAM, "U_EVE") == []


def test_no_slack_verified_email_no_link(env: Env) -> None:
    with pytest.raises(LinkFailed) as failed:
        env.linker.start(TEAM, "U_ANN", "acme", slack_email=None)
    assert "verified email" in str(failed.value)


def test_unreachable_provider_is_a_problem_not_an_error(env: Env, tmp_path: Path) -> None:
    link(env, "U_ANN", ANN)
    env.provider.__exit__(None, None, None)  # the provider goes away

    resolved = env.resolver.resolve(TEAM, "U_ANN", ANN.email)

    assert resolved.principals == {PUBLIC, "user:ann@acme.io"}
    assert [p.source for p in resolved.problems] == ["acme"]
    assert "couldn't reach Acme" in resolved.problems[0].message
    assert [i.status for i in env.linker.links(TEAM, "U_ANN")] == ["active"]  # not the user's fault
