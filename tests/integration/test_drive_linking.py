"""A person links their Google account for the Drive source through the existing link flow (authlib, PKCE,
bound to the Slack-verified email), then what Drive shares with that account directly counts for them, even
where group members cannot be listed. The OAuth provider plays Google's sign-in; Drive answers the linked
user's own token (`about.get`)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from pydantic import SecretStr
from starlette.applications import Starlette

from bot.identity import AccountLinker, OAuthSourceConfig, PrincipalResolver
from bot.oauth_routes import oauth_routes
from bot.vault import TokenVault
from connectors.base import LinkedIdentity
from connectors.database import make_engine
from connectors.knowledge.acl import can_see
from connectors.sources.google_drive import GoogleDriveConnector
from tests.integration.connectors.conftest import drain
from tests.integration.connectors.drive_data import acme_drive
from tests.integration.connectors.test_google_drive import drive_config
from tests.integration.test_account_linking import FakeClock, browse, serve_asgi
from tests.servers.google_drive import serve_drive
from tests.servers.oauth_provider import OAuthProvider, ProviderUser

TEAM = "T0001"
ANN = ProviderUser(sub="1077", email="ann@acme.io")


def test_google_preset_fills_googles_endpoints_and_asks_for_offline_access() -> None:
    config = OAuthSourceConfig.model_validate(
        {"source": "drive", "provider": "google", "client_id": "c", "client_secret": "s"}
    )
    assert config.authorize_url == "https://accounts.google.com/o/oauth2/v2/auth"
    assert config.userinfo_url == "https://openidconnect.googleapis.com/v1/userinfo"
    assert config.authorize_params == {"access_type": "offline", "prompt": "consent"}
    assert config.label == "Google Drive" and "email" in config.scopes


@pytest.fixture
def linker(tmp_path: Path) -> Iterator[tuple[AccountLinker, TokenVault]]:
    clock = FakeClock()
    engine = make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}")
    vault = TokenVault.open(engine, TokenVault.generate_key(), production=True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    callback = f"http://127.0.0.1:{sock.getsockname()[1]}/oauth/callback"
    try:
        with OAuthProvider(users=[ANN], clock=clock) as google:
            google.add_client("sleuth", "s3cret", [callback])
            base = google.base_url
            config = OAuthSourceConfig.model_validate(
                {
                    "source": "drive",
                    "provider": "google",
                    "client_id": "sleuth",
                    "client_secret": SecretStr("s3cret"),
                    "authorize_url": f"{base}/authorize",
                    "token_url": f"{base}/token",
                    "revoke_url": f"{base}/revoke",
                    "userinfo_url": f"{base}/userinfo",
                }
            )
            linked = AccountLinker(engine, vault, [config], redirect_uri=callback, clock=clock)
            with serve_asgi(Starlette(routes=oauth_routes(linked)), sock):
                yield linked, vault
    finally:
        sock.close()
        engine.dispose()


def test_a_linked_google_account_sees_what_is_shared_with_it_directly(
    linker: tuple[AccountLinker, TokenVault],
) -> None:
    accounts, vault = linker
    url = accounts.start(TEAM, "U_ANN", "drive", slack_email=ANN.email, login_hint=ANN.email)
    assert parse_qs(urlsplit(url).query)["access_type"] == ["offline"]
    assert browse(url).status_code == 200
    token = vault.get_token(TEAM, "U_ANN", "drive")
    assert token is not None

    fake = acme_drive()
    fake.directory_forbidden = True  # no group expansion: only direct shares can count
    fake.share("link-only", "user", email="ann@acme.io")
    fake.user_tokens[token.access_token] = "ann@acme.io"  # Drive knows the token Google issued
    with serve_drive(fake) as api:
        connector = GoogleDriveConnector(drive_config(api, fake), name="drive")
        docs = {d.id: d for d in drain(connector.pull(None)).docs}
        resolver = PrincipalResolver(accounts, lambda source, identity: connector.principals(identity))
        resolved = resolver.resolve(TEAM, "U_ANN", ANN.email)
        connector.close()
    assert resolved.problems == [] and "user:drive:ann@acme.io" in resolved.principals
    assert fake.paths("/drive/v3/about") == ["/drive/v3/about"]  # asked with Ann's own token
    assert can_see(resolved.principals, docs["drive:link-only"].acl)  # shared with her directly
    assert not can_see(
        resolved.principals, docs["drive:runbook"].acl
    )  # only through a group Sleuth can't list
    unlinked = connector.principals(LinkedIdentity(source="drive", account="bob@acme.io"))
    assert not can_see(frozenset(unlinked), docs["drive:link-only"].acl)
