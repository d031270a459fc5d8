from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.identity import InvalidLinkState, LinkFailed, LinkResult
from bot.oauth_routes import INVALID_STATE_MESSAGE, oauth_routes


class FakeLinker:
    def __init__(self, outcome: LinkResult | Exception) -> None:
        self.outcome = outcome
        self.calls: list[dict[str, Any]] = []

    def complete(
        self, *, state: str, code: str | None, error: str | None = None, browser: str | None = None
    ) -> LinkResult:
        self.calls.append({"state": state, "code": code, "error": error})
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def get(linker: FakeLinker, query: str) -> Any:
    app = Starlette(routes=oauth_routes(linker))  # type: ignore[arg-type]
    with TestClient(app) as client:
        return client.get(f"/oauth/callback?{query}")


def test_success_page_escapes_the_account() -> None:
    linker = FakeLinker(LinkResult("T1", "U1", "acme", "Acme", "<b>ann</b>@acme.io"))
    response = get(linker, "code=c&state=s")
    assert response.status_code == 200
    assert (
        "Linked the Acme account &lt;b&gt;ann&lt;/b&gt;@acme.io to the Slack user U1. You can close"
        in response.text
    )
    assert response.headers["referrer-policy"] == "no-referrer"
    assert linker.calls == [{"state": "s", "code": "c", "error": None}]


def test_invalid_state_page_is_generic() -> None:
    response = get(FakeLinker(InvalidLinkState()), "code=c&state=s")
    assert response.status_code == 400
    assert INVALID_STATE_MESSAGE in response.text


def test_missing_state_is_passed_on_as_empty() -> None:
    linker = FakeLinker(InvalidLinkState())
    assert get(linker, "code=c").status_code == 400
    assert linker.calls[0]["state"] == ""


def test_provider_error_page_says_what_to_do() -> None:
    response = get(FakeLinker(LinkFailed("acme", "Acme", "access_denied")), "error=access_denied&state=s")
    assert response.status_code == 400
    assert "Linking Acme did not finish. Run `/sleuth link acme` to try again." in response.text
    assert "access_denied" not in response.text
