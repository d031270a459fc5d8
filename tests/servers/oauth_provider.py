"""A local OAuth 2.0 authorization server for tests and the demo, built on authlib's core server.

authlib's `AuthorizationServer` with `AuthorizationCodeGrant` + `CodeChallenge(required=True)` (PKCE),
`RefreshTokenGrant` (rotating refresh tokens) and `RevocationEndpoint` (RFC 7009), adapted to the standard
library's `ThreadingHTTPServer` (the same adapter authlib's Flask integration is, minus Flask). Listens on
127.0.0.1 with port 0.

- `GET /authorize` approves at once for the user named by `login_hint=<email>` or the `X-Test-Login` header
  (`X-Test-Login: deny` denies) and redirects to the client's redirect_uri with `code` and `state`.
- `POST /token`, `POST /revoke` (client_secret_basic or client_secret_post).
- `GET /userinfo` with a bearer token: `{"sub", "email", "email_verified", "groups"}`; 401 for unknown, expired or revoked
  tokens.

Helpers for tests: `expire_access_tokens(email)`, `revoke_tokens(email)`, `revoked` (what /revoke received),
`token_requests` (grant types seen at /token). Importable without pytest.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from authlib.oauth2 import AuthorizationServer, OAuth2Error
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Payload, OAuth2Request, grants
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge

Clock = Callable[[], float]
HOST = "127.0.0.1"


@dataclass(frozen=True)
class ProviderUser:
    sub: str
    email: str
    groups: tuple[str, ...] = ()
    email_verified: bool = True  # OpenID Connect's claim: the provider confirmed the address


@dataclass
class ProviderClient(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    scope: str = "openid email groups"

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        return self.redirect_uris[0]

    def get_allowed_scope(self, scope: str | None) -> str:
        allowed = set(self.scope.split())
        return " ".join(s for s in (scope or "").split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in ("authorization_code", "refresh_token")


@dataclass
class _Code:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: ProviderUser
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class _Token:
    client_id: str
    user: ProviderUser
    scope: str
    access_token: str
    refresh_token: str | None
    issued_at: float
    expires_in: int
    access_revoked: bool = False
    refresh_revoked: bool = False

    def __repr__(self) -> str:
        return f"_Token(user={self.user.email!r}, revoked={self.access_revoked}/{self.refresh_revoked})"

    def check_client(self, client: ClientMixin) -> bool:
        return bool(client.get_client_id() == self.client_id)

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def get_user(self) -> ProviderUser:
        return self.user


class _Request(OAuth2Request):  # type: ignore[misc]
    """An authlib request made from what the standard library's handler read."""

    def __init__(self, method: str, uri: str, headers: Any, query: str, body: str) -> None:
        super().__init__(method=method, uri=uri, headers=headers)
        self._args = _first(parse_qs(query, keep_blank_values=True))
        self._form = _first(parse_qs(body, keep_blank_values=True))
        merged: dict[str, list[str]] = defaultdict(list)
        for part in (query, body):
            for key, values in parse_qs(part, keep_blank_values=True).items():
                merged[key].extend(values)
        self.payload = _Payload(merged)

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _Payload(OAuth2Payload):  # type: ignore[misc]
    def __init__(self, values: dict[str, list[str]]) -> None:
        self._datalist = values
        self._data = _first(values)

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> dict[str, list[str]]:
        return self._datalist


def _first(values: dict[str, list[str]]) -> dict[str, str]:
    return {key: items[0] for key, items in values.items() if items}


Response = tuple[int, bytes, list[tuple[str, str]]]


class _Server(AuthorizationServer):  # type: ignore[misc]
    def __init__(self, provider: OAuthProvider) -> None:
        super().__init__()
        self._provider = provider
        self.register_token_generator(
            "default",
            BearerTokenGenerator(
                access_token_generator=lambda **_: secrets.token_urlsafe(24),
                refresh_token_generator=lambda **_: secrets.token_urlsafe(32),
                expires_generator=lambda client, grant_type: provider.access_token_ttl_s,
            ),
        )

    def query_client(self, client_id: str) -> ProviderClient | None:
        return self._provider.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        self._provider._save_token(token, request)

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        if not isinstance(request, OAuth2Request):
            raise TypeError("the local provider builds its requests itself")
        return request

    def handle_response(self, status: int, body: Any, headers: Iterable[tuple[str, str]]) -> Response:
        data = json.dumps(body).encode() if isinstance(body, dict) else str(body or "").encode()
        return status, data, list(headers)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None


class _CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ("client_secret_basic", "client_secret_post")

    @property
    def _provider(self) -> OAuthProvider:
        return self.server._provider  # type: ignore[no-any-return]

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        self._provider._codes[code] = _Code(
            code=code,
            client_id=request.client.client_id,
            redirect_uri=request.payload.redirect_uri or "",
            scope=request.client.get_allowed_scope(request.payload.scope),
            user=request.user,
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
            expires_at=self._provider.clock() + 600,
        )

    def query_authorization_code(self, code: str, client: ProviderClient) -> _Code | None:
        found = self._provider._codes.get(code)
        if found and found.client_id == client.client_id and found.expires_at > self._provider.clock():
            return found
        return None

    def delete_authorization_code(self, authorization_code: _Code) -> None:
        self._provider._codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: _Code) -> ProviderUser:
        return authorization_code.user


class _RefreshGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ("client_secret_basic", "client_secret_post")
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> _Token | None:
        token = self.server._provider._by_refresh.get(refresh_token)
        return token if token and not token.refresh_revoked else None

    def authenticate_user(self, refresh_token: _Token) -> ProviderUser:
        return refresh_token.user

    def revoke_old_credential(self, refresh_token: _Token) -> None:
        refresh_token.refresh_revoked = True
        refresh_token.access_revoked = True


class _Revocation(RevocationEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = ("client_secret_basic", "client_secret_post")

    def query_token(self, token_string: str, token_type_hint: str | None) -> _Token | None:
        provider: OAuthProvider = self.server._provider
        provider.revoked.append(token_string)
        found = provider._by_access.get(token_string)
        if found is None or token_type_hint == "refresh_token":
            found = provider._by_refresh.get(token_string) or found
        return found

    def revoke_token(self, token: _Token, request: OAuth2Request) -> None:
        token.access_revoked = True
        token.refresh_revoked = True


@dataclass
class OAuthProvider:
    """The provider's data and its HTTP server. Use as a context manager; `base_url` once entered."""

    users: list[ProviderUser] = field(default_factory=list)
    access_token_ttl_s: int = 3600
    clock: Clock = time.time
    clients: dict[str, ProviderClient] = field(default_factory=dict)
    revoked: list[str] = field(default_factory=list)
    token_requests: list[str] = field(default_factory=list)
    # False: a provider without PKCE (it ignores code_challenge and code_verifier, as some OAuth apps do); the
    # state is then all that ties a code to the request that asked for it.
    pkce: bool = True

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._codes: dict[str, _Code] = {}
        self._by_access: dict[str, _Token] = {}
        self._by_refresh: dict[str, _Token] = {}
        self._auth = _Server(self)
        self._auth.register_grant(_CodeGrant, [CodeChallenge(required=True)] if self.pkce else [])
        self._auth.register_grant(_RefreshGrant)
        self._auth.register_endpoint(_Revocation)
        self._http: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- setup and helpers for tests --

    def add_client(self, client_id: str, client_secret: str, redirect_uris: Iterable[str]) -> ProviderClient:
        client = ProviderClient(client_id, client_secret, tuple(redirect_uris))
        self.clients[client_id] = client
        return client

    def user(self, email: str) -> ProviderUser | None:
        return next((u for u in self.users if u.email.lower() == email.strip().lower()), None)

    def expire_access_tokens(self, email: str) -> int:
        """Makes every access token of this user expired (their refresh tokens still work)."""
        with self._lock:
            tokens = [t for t in self._by_access.values() if t.user.email == email]
            for token in tokens:
                token.expires_in = 0
            return len(tokens)

    def revoke_tokens(self, email: str) -> int:
        """Revokes every access and refresh token of this user, as a user or admin would at the provider."""
        with self._lock:
            tokens = [t for t in self._by_access.values() if t.user.email == email]
            for token in tokens:
                token.access_revoked = token.refresh_revoked = True
            return len(tokens)

    def active_tokens(self, email: str) -> int:
        with self._lock:
            return sum(1 for t in self._by_access.values() if t.user.email == email and self._usable(t))

    @property
    def base_url(self) -> str:
        if self._http is None:
            raise RuntimeError("the provider is not running; use it as a context manager")
        return f"http://{HOST}:{self._http.server_port}"

    def __enter__(self) -> OAuthProvider:
        self._http = ThreadingHTTPServer((HOST, 0), _make_handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="oauth-provider",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._http = self._thread = None

    # -- endpoints --

    def handle(self, method: str, uri: str, headers: Any, body: str) -> Response:
        parts = urlsplit(uri)
        request = _Request(method, uri, headers, parts.query, body)
        with self._lock:
            if parts.path == "/authorize" and method == "GET":
                return self._authorize(request, headers)
            if parts.path == "/token" and method == "POST":
                self.token_requests.append(request.payload.grant_type or "")
                return self._auth.create_token_response(request)  # type: ignore[no-any-return]
            if parts.path == "/revoke" and method == "POST":
                return self._auth.create_endpoint_response("revocation", request)  # type: ignore[no-any-return]
            if parts.path == "/userinfo" and method == "GET":
                return self._userinfo(headers)
        return _json(404, {"error": "not_found"})

    def _authorize(self, request: _Request, headers: Any) -> Response:
        login = headers.get("X-Test-Login") or request.payload.data.get("login_hint") or ""
        user = self.user(login) if login != "deny" else None
        try:
            grant = self._auth.get_consent_grant(request, end_user=user)
        except OAuth2Error as error:
            return self._auth.handle_error_response(request, error)  # type: ignore[no-any-return]
        if user is None and login != "deny":
            return _json(400, {"error": "unknown_user", "error_description": "no such user at the provider"})
        return self._auth.create_authorization_response(request, grant_user=user, grant=grant)  # type: ignore[no-any-return]

    def _userinfo(self, headers: Any) -> Response:
        scheme, _, value = (headers.get("Authorization") or "").partition(" ")
        token = self._by_access.get(value.strip()) if scheme.lower() == "bearer" else None
        if token is None or not self._usable(token):
            return (
                401,
                b'{"error": "invalid_token"}',
                [
                    ("Content-Type", "application/json"),
                    ("WWW-Authenticate", 'Bearer error="invalid_token"'),
                ],
            )
        user = token.user
        body = {"sub": user.sub, "email": user.email, "email_verified": user.email_verified}
        return _json(200, body | {"groups": list(user.groups)})

    def _usable(self, token: _Token) -> bool:
        return not token.access_revoked and token.issued_at + token.expires_in > self.clock()

    def _save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        saved = _Token(
            client_id=request.client.client_id,
            user=request.user,
            scope=token.get("scope", ""),
            access_token=token["access_token"],
            refresh_token=token.get("refresh_token"),
            issued_at=self.clock(),
            expires_in=int(token.get("expires_in", self.access_token_ttl_s)),
        )
        self._by_access[saved.access_token] = saved
        if saved.refresh_token:
            self._by_refresh[saved.refresh_token] = saved


def _json(status: int, body: dict[str, Any]) -> Response:
    return status, json.dumps(body).encode(), [("Content-Type", "application/json")]


def _make_handler(provider: OAuthProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            uri = f"{provider.base_url}{self.path}"
            status, data, headers = provider.handle(method, uri, self.headers, body)
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tokens travel in query strings
            return None

    return Handler
