"""Service-account sign-in for the Drive client: the OAuth 2.0 JWT-bearer grant (RFC 7523) Google documents
for server-to-server apps, with domain-wide delegation (`sub` is the admin the account acts as).

The assertion is signed RS256 with the key's private key (`cryptography`); the access token it buys is kept
until a minute before it expires, and fetched again once when an API call answers 401. Part of the client:
only `client.py` uses it.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import httpx
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from connectors.base import AuthExpired, SourceUnavailable

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASSERTION_TTL_S = 3600  # Google accepts at most an hour
EARLY_S = 60.0  # a token is renewed this long before it expires


class ServiceAccountKey(BaseModel):
    """The fields Sleuth reads from the JSON key file Google hands out for a service account."""

    model_config = ConfigDict(extra="ignore")
    client_email: str
    private_key: SecretStr
    private_key_id: str = ""

    @classmethod
    def parse(cls, raw: SecretStr) -> ServiceAccountKey:
        try:
            return cls.model_validate(json.loads(raw.get_secret_value()))
        except (ValueError, ValidationError) as exc:
            raise AuthExpired("the Google service account key is not a JSON key file") from exc


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed_assertion(
    key: ServiceAccountKey, *, audience: str, scopes: tuple[str, ...], subject: str, now: float
) -> str:
    """An RS256-signed JWT asking `audience` for `scopes` on behalf of `subject`."""
    header = {"alg": "RS256", "typ": "JWT"} | ({"kid": key.private_key_id} if key.private_key_id else {})
    claims = {
        "iss": key.client_email,
        "sub": subject,
        "scope": " ".join(scopes),
        "aud": audience,
        "iat": int(now),
        "exp": int(now) + ASSERTION_TTL_S,
    }
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    private = serialization.load_pem_private_key(key.private_key.get_secret_value().encode(), password=None)
    if not isinstance(private, rsa.RSAPrivateKey):
        raise AuthExpired("the Google service account key is not an RSA key")
    signature = private.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_b64(signature)}"


class ServiceAccountAuth(httpx.Auth):
    """Adds a service account's bearer token to each request, exchanging a fresh assertion when needed."""

    requires_response_body = True

    def __init__(
        self,
        key: ServiceAccountKey,
        *,
        token_url: str,
        scopes: tuple[str, ...],
        subject: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key, self._token_url, self._scopes, self._subject = key, token_url, scopes, subject
        self._clock = clock
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = threading.Lock()

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        with self._lock:
            fresh = self._token is not None and self._clock() < self._expires_at - EARLY_S
        if not fresh:
            self._keep((yield self._token_request()))
        request.headers["Authorization"] = f"Bearer {self._token}"
        response = yield request
        if response.status_code == 401 and fresh:  # revoked or expired early: one new token, one more try
            self._keep((yield self._token_request()))
            request.headers["Authorization"] = f"Bearer {self._token}"
            yield request

    def _token_request(self) -> httpx.Request:
        assertion = signed_assertion(
            self._key, audience=self._token_url, scopes=self._scopes, subject=self._subject, now=self._clock()
        )
        form = {"grant_type": JWT_BEARER, "assertion": assertion}
        return httpx.Request("POST", self._token_url, data=form, headers={"Accept": "application/json"})

    def _keep(self, response: httpx.Response) -> None:
        if response.status_code >= 500:
            raise SourceUnavailable("Google's token endpoint is not answering properly; try again later")
        body: Any = _json(response)
        token = body.get("access_token") if isinstance(body, dict) else None
        if response.status_code != 200 or not isinstance(token, str):
            error = body.get("error", "unknown") if isinstance(body, dict) else "unknown"
            raise AuthExpired(
                f"Google refused the service account ({error}); check its key and domain-wide delegation"
            )
        with self._lock:
            self._token = token
            self._expires_at = self._clock() + float(body.get("expires_in", 3600))


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
