"""Links bound by "Sign in with Slack" (for deployments whose provider emails differ from Slack's): the browser
that finishes a link proves at Slack (OpenID Connect, the emulator) that its user asked for it. A forwarded link
proves the wrong person; a provider URL carried to another browser lacks the sign-in cookie. Real HTTP
throughout: the Slack emulator, the local OAuth provider, Sleuth's routes under uvicorn, httpx as browsers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import SecretStr
from starlette.applications import Starlette

from bot.identity import AccountLinker, OAuthSourceConfig
from bot.identity.slack_signin import SlackSignIn, SlackSignInConfig
from bot.oauth_routes import oauth_routes
from bot.testing.slack_emulator import SlackEmulator
from bot.vault import TokenVault
from connectors.database import make_engine
from tests.integration.test_account_linking import FakeClock, serve_asgi
from tests.servers.oauth_provider import OAuthProvider, ProviderUser

ANN = ProviderUser(sub="acme-ann", email="ann.private@example.org", groups=("eng",))  # not her Slack email
DANA = ProviderUser(sub="acme-dana", email="dana@example.org", groups=("finance",))


@dataclass
class Env:
    slack: SlackEmulator
    provider: OAuthProvider
    linker: AccountLinker
    team: str


class Browser:
    """One browser: its own cookies; signs in at Slack as `slack_user` and at the provider as `provider_user`."""

    def __init__(self, env: Env, slack_user: str, provider_user: str) -> None:
        slack_host = urlsplit(env.slack.base_url).netloc

        def login(request: httpx.Request) -> None:
            who = slack_user if request.url.netloc.decode() == slack_host else provider_user
            request.headers["X-Test-Login"] = who

        self.client = httpx.Client(follow_redirects=True, timeout=10, event_hooks={"request": [login]})

    def open(self, url: str, *, follow: bool = True) -> httpx.Response:
        return self.client.get(url, follow_redirects=follow)


@pytest.fixture
def pkce() -> bool:
    return True  # the provider enforces PKCE; a test may say it does not support it


@pytest.fixture
def env(tmp_path: Path, pkce: bool) -> Iterator[Env]:
    clock = FakeClock()
    engine = make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}")
    vault = TokenVault.open(engine, TokenVault.generate_key(), production=True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        with SlackEmulator() as slack, OAuthProvider(users=[ANN, DANA], clock=clock, pkce=pkce) as provider:
            slack.add_user("U_ANN", "ann", email="ann@acme.io")
            slack.add_user("U_MAL", "mallory", email="mallory@acme.io")
            slack.add_user("U_DANA", "dana", email="dana@acme.io")
            slack.oidc.add_client("slack-client", "slack-secret", [f"{base}/oauth/slack/callback"])
            provider.add_client("sleuth", "s3cret", [f"{base}/oauth/callback"])
            config = OAuthSourceConfig(
                source="acme",
                display_name="Acme",
                client_id="sleuth",
                client_secret=SecretStr("s3cret"),
                authorize_url=f"{provider.base_url}/authorize",
                token_url=f"{provider.base_url}/token",
                revoke_url=f"{provider.base_url}/revoke",
                userinfo_url=f"{provider.base_url}/userinfo",
                binding="slack",
            )
            signin = SlackSignIn(
                SlackSignInConfig(
                    client_id="slack-client",
                    client_secret=SecretStr("slack-secret"),
                    redirect_uri=f"{base}/oauth/slack/callback",
                    start_url=f"{base}/oauth/slack/start",
                    authorize_url=f"{slack.base_url}/openid/connect/authorize",
                    api_url=slack.api_url,
                )
            )
            linker = AccountLinker(
                engine,
                vault,
                [config],
                redirect_uri=f"{base}/oauth/callback",
                clock=clock,
                slack_signin=signin,
            )
            with serve_asgi(Starlette(routes=oauth_routes(linker)), sock):
                yield Env(slack, provider, linker, slack.workspace.team_id)
    finally:
        sock.close()
        engine.dispose()


def test_own_browser_links_an_account_whose_email_differs(env: Env) -> None:
    url = env.linker.start(env.team, "U_ANN", "acme", slack_email="ann@acme.io")
    assert url.startswith(env.linker._slack.config.start_url)  # type: ignore[union-attr]

    page = Browser(env, "U_ANN", ANN.email).open(url)

    assert page.status_code == 200, page.text
    assert "Linked the Acme account ann.private@example.org to the Slack user U_ANN" in page.text
    assert [i.account for i in env.linker.links(env.team, "U_ANN")] == [ANN.email]
    assert env.slack.oidc.signed_in == ["U_ANN"]


def test_a_forwarded_link_signs_in_the_wrong_slack_user_and_links_nothing(env: Env) -> None:
    url = env.linker.start(env.team, "U_MAL", "acme", slack_email="mallory@acme.io")

    page = Browser(env, "U_DANA", DANA.email).open(url)  # Dana opens what Mallory sent her

    assert page.status_code == 400
    assert "signed in to Slack as U_DANA" in page.text and "U_MAL" in page.text
    assert env.linker.links(env.team, "U_MAL") == []
    assert env.provider.token_requests == []  # the provider was never reached
    assert Browser(env, "U_MAL", DANA.email).open(url).status_code == 400  # and the link is spent


def test_the_provider_step_carried_to_another_browser_links_nothing(env: Env) -> None:
    url = env.linker.start(env.team, "U_MAL", "acme", slack_email="mallory@acme.io")
    mallory = Browser(env, "U_MAL", DANA.email)
    hop = mallory.open(url, follow=False)  # Sleuth -> Slack
    hop = mallory.open(hop.headers["location"], follow=False)  # Slack signs Mallory in -> Sleuth
    to_provider = mallory.open(hop.headers["location"], follow=False).headers[
        "location"
    ]  # proven -> provider
    assert to_provider.startswith(env.provider.base_url)

    page = Browser(env, "U_DANA", DANA.email).open(to_provider)  # Dana finishes the provider step

    assert page.status_code == 400 and "browser that signed in to Slack" in page.text
    assert env.linker.links(env.team, "U_MAL") == []


def _to_provider(browser: Browser, url: str) -> str:
    """Follows a link URL through Sleuth and Slack in `browser` up to (not into) the provider's authorize URL."""
    hop = browser.open(url, follow=False)  # Sleuth -> Slack
    hop = browser.open(hop.headers["location"], follow=False)  # Slack signs in -> Sleuth
    return str(browser.open(hop.headers["location"], follow=False).headers["location"])  # proven -> provider


def _code_for(env: Env, who: str, state: str) -> str:
    """A callback URL carrying a code the provider issued to `who`, from an authorization request built with
    authlib for `state` (and a PKCE pair of the requester's own), never reaching Sleuth."""
    from authlib.integrations.httpx_client import OAuth2Client

    redirect = str(env.linker._redirect_uri)  # type: ignore[attr-defined]
    with OAuth2Client("sleuth", "s3cret", redirect_uri=redirect, code_challenge_method="S256") as client:
        url, _ = client.create_authorization_url(
            f"{env.provider.base_url}/authorize", state=state, code_verifier="m" * 64
        )
    answer = httpx.get(url, headers={"X-Test-Login": who}, follow_redirects=False, timeout=10)
    assert answer.status_code == 302 and "code=" in answer.headers["location"]
    return str(answer.headers["location"])


@pytest.mark.parametrize("pkce", [False, True])
def test_a_code_obtained_by_someone_else_replayed_in_the_askers_browser_links_nothing(env: Env) -> None:
    """Mallory has the link URL Ann was given (forwarded, or read off her screen) and gets a code for her own
    account with that link's state; she plants it in Ann's browser, which has signed in to Slack as Ann.
    The provider's state is minted per proven browser and never was the link's, so nothing is linked, even
    at a provider that does not check PKCE; Ann's own provider step still links her account."""
    url = env.linker.start(env.team, "U_ANN", "acme", slack_email="ann@acme.io")
    ann = Browser(env, "U_ANN", ANN.email)
    to_provider = _to_provider(ann, url)
    link_state = url.rsplit("link=", 1)[1]

    planted = ann.open(_code_for(env, DANA.email, link_state))

    assert planted.status_code == 400 and "invalid or has expired" in planted.text
    assert env.linker.links(env.team, "U_ANN") == [] and env.provider.token_requests == []
    page = ann.open(to_provider)  # her own step, in her own browser
    assert page.status_code == 200, page.text
    assert [i.account for i in env.linker.links(env.team, "U_ANN")] == [ANN.email]


def test_a_stolen_provider_step_code_replayed_elsewhere_links_nothing(env: Env) -> None:
    """Ann's code for her own provider step, taken from her browser's address bar before it reached Sleuth,
    is replayed by Mallory in a browser of her own that signed in to Slack as herself: refused (the step
    belongs to Ann's browser), and the step is spent, so Ann's browser cannot be raced either."""
    url = env.linker.start(env.team, "U_ANN", "acme", slack_email="ann@acme.io")
    ann = Browser(env, "U_ANN", ANN.email)
    callback = ann.open(_to_provider(ann, url), follow=False).headers["location"]  # the provider's redirect
    mallory = Browser(env, "U_MAL", DANA.email)
    mallory.open(env.linker.start(env.team, "U_MAL", "acme", slack_email="mallory@acme.io"), follow=False)

    stolen = mallory.open(callback)

    assert stolen.status_code == 400 and "browser that signed in to Slack" in stolen.text
    assert env.linker.links(env.team, "U_ANN") == env.linker.links(env.team, "U_MAL") == []
    assert ann.open(callback).status_code == 400  # spent by the first use
