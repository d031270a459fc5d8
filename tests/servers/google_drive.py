"""A local Google Drive v3 + Admin SDK Directory emulator, written from Google's published reference.

Drive: `files.list` (`q` of the forms `'<folder>' in parents and trashed = false` and `trashed = false` with
`corpora=drive&driveId=`), `files.get` (metadata, or the bytes with `alt=media`; Google's own formats answer
403 `fileNotDownloadable`), `files.export` (`mimeType`; 403 `exportSizeLimitExceeded` past 10 MB),
`permissions.list` (a file's, a folder's or a shared drive's), `changes.getStartPageToken`, `changes.list`
(the latest state of each file changed since the token, `nextPageToken` while more remain, then
`newStartPageToken`; `removed` for deleted files), `drives.get`, `about.get`. Directory: `members.list` with
`includeDerivedMembership` (nested groups flattened) and `maxResults` (200 at most). Paging everywhere is
`pageToken` in, `nextPageToken` out. Errors carry Google's body (`{"error": {"code", "message", "errors":
[{"domain", "reason", "message"}]}}`); injected faults serve 429 `rateLimitExceeded`, 403
`userRateLimitExceeded` and 5xx `backendError`, with `Retry-After` when asked.

Auth: `POST /token` is the JWT-bearer grant (RFC 7523): the assertion's RS256 signature is checked against the
service account's public key, and its `aud`, `exp`, `sub` (a delegated admin) and scopes; the access token it
issues carries those scopes. Tokens in `user_tokens` are linked users' own: Drive answers them for files
shared with that address only.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.servers.http import serve_http, take_fault

FOLDER = "application/vnd.google-apps.folder"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
SLIDES = "application/vnd.google-apps.presentation"
DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.readonly"
MEMBER_SCOPE = "https://www.googleapis.com/auth/admin.directory.group.member.readonly"
EXPORT_LIMIT = 10 * 1024 * 1024
START = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
Reply = tuple[int, Any, dict[str, str]]  # status, body (JSON value or bytes), headers


def google_time(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def google_error(status: int, reason: str, message: str, domain: str = "global") -> dict[str, Any]:
    return {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"domain": domain, "reason": reason, "message": message}],
        }
    }


@dataclass
class Fault:
    status: int
    reason: str
    path: str | None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ServiceAccount:
    """A service account key pair: `key_json()` is the file an admin downloads."""

    email: str = "sleuth@acme-project.iam.gserviceaccount.com"
    key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )

    def key_json(self) -> str:
        pem = self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        return json.dumps(
            {
                "type": "service_account",
                "client_email": self.email,
                "private_key": pem,
                "private_key_id": "k1",
            }
        )


@dataclass
class FakeDrive:
    account: ServiceAccount = field(default_factory=ServiceAccount)
    delegated: set[str] = field(default_factory=lambda: {"admin@acme.io"})  # admins the account may act as
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    media: dict[str, bytes] = field(default_factory=dict)  # downloadable bytes, or a Google file's export
    permissions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # file, folder or drive id
    drives: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    directory_forbidden: bool = False  # the admin has no Directory access: members.list answers 403
    changes: list[dict[str, Any]] = field(default_factory=list)
    issued: dict[str, set[str]] = field(default_factory=dict)  # access token -> scopes
    user_tokens: dict[str, str] = field(default_factory=dict)  # a linked user's token -> their address
    requests: list[tuple[str, str, dict[str, list[str]]]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    max_page: int = 100
    clock: datetime = START
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    # -- building the data --

    def tick(self) -> str:
        self.clock += timedelta(minutes=3, seconds=7)
        return google_time(self.clock)

    def add_drive(self, drive_id: str, name: str) -> None:
        self.drives[drive_id] = {"kind": "drive#drive", "id": drive_id, "name": name}
        self.permissions.setdefault(drive_id, [])

    def add(
        self, file_id: str, name: str, mime: str, parent: str, data: bytes = b"", *, drive: str | None = None
    ) -> None:
        self.files[file_id] = {
            "kind": "drive#file", "id": file_id, "name": name, "mimeType": mime, "parents": [parent],
            "modifiedTime": self.tick(), "trashed": False, "version": "1",
            "webViewLink": f"https://docs.google.com/d/{file_id}/view",
            **({"driveId": drive} if drive else {}),
            **({"size": str(len(data))} if mime not in (FOLDER, DOC, SHEET, SLIDES) else {}),
        }  # fmt: skip
        self.media[file_id] = data
        self.permissions.setdefault(file_id, [])
        self._changed(file_id)

    def folder(self, file_id: str, name: str, parent: str = "root", *, drive: str | None = None) -> None:
        self.add(file_id, name, FOLDER, parent, drive=drive)

    def share(
        self, file_id: str, kind: str, *, role: str = "reader", email: str = "", domain: str = ""
    ) -> None:
        perm: dict[str, Any] = {
            "kind": "drive#permission",
            "id": f"p{sum(map(len, self.permissions.values())) + 1}",
            "type": kind,
            "role": role,
        }
        perm |= {"emailAddress": email} if email else {}
        perm |= {"domain": domain} if domain else {}
        perm |= {"allowFileDiscovery": False} if kind in ("anyone", "domain") else {}
        self.permissions.setdefault(file_id, []).append(perm)
        if file_id in self.files:  # a shared drive's members change no file
            self._bump(file_id, content=False)

    def unshare(self, file_id: str, email: str) -> None:
        self.permissions[file_id] = [p for p in self.permissions[file_id] if p.get("emailAddress") != email]
        self._bump(file_id, content=False)

    def edit(self, file_id: str, data: bytes) -> None:
        self.media[file_id] = data
        self._bump(file_id, content=True)

    def move(self, file_id: str, parent: str) -> None:
        self.files[file_id]["parents"] = [parent]
        self._bump(file_id, content=False)

    def trash(self, file_id: str) -> None:
        self.files[file_id]["trashed"] = True
        self._bump(file_id, content=False)

    def delete(self, file_id: str) -> None:
        self.files.pop(file_id)
        self._changed(file_id)

    def fail_next(
        self,
        n: int,
        status: int = 429,
        *,
        reason: str = "rateLimitExceeded",
        path: str | None = None,
        retry_after: str | None = None,
    ) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self.faults.extend(Fault(status, reason, path, headers) for _ in range(n))

    def paths(self, prefix: str = "") -> list[str]:
        return [p for _, p, _ in self.requests if p.startswith(prefix)]

    def _bump(self, file_id: str, *, content: bool) -> None:
        meta = self.files[file_id]
        meta["version"] = str(int(meta["version"]) + 1)
        if content:
            meta["modifiedTime"] = self.tick()
        self._changed(file_id)

    def _changed(self, file_id: str) -> None:
        self.changes.append({"fileId": file_id, "time": self.tick()})

    # -- serving --

    def route(
        self, method: str, path: str, query: dict[str, list[str]], auth: str, form: dict[str, list[str]]
    ) -> Reply:
        if method == "POST" and path == "/token":
            return self._token(form)
        token = auth.removeprefix("Bearer ")
        if token in self.user_tokens:
            return self._as_user(self.user_tokens[token], path)
        if token not in self.issued:
            return (
                401,
                {
                    "error": {
                        "code": 401,
                        "message": "Request had invalid authentication credentials.",
                        "status": "UNAUTHENTICATED",
                    }
                },
                {},
            )
        scopes = self.issued[token]
        directory = re.fullmatch(r"/admin/directory/v1/groups/([^/]+)/members", path)
        if directory:
            return self._members(directory.group(1), query, scopes)
        if DRIVE_SCOPE not in scopes:
            return 403, google_error(403, "insufficientPermissions", "Insufficient Permission"), {}
        return self._drive(path, query)

    def _drive(self, path: str, query: dict[str, list[str]]) -> Reply:
        one = lambda name: (query.get(name) or [""])[0]  # noqa: E731
        if path == "/drive/v3/changes/startPageToken":
            return 200, {"kind": "drive#startPageToken", "startPageToken": str(len(self.changes) + 1)}, {}
        if path == "/drive/v3/changes":
            return self._changes(one("pageToken"), int(one("pageSize") or 100), one("driveId"))
        if path == "/drive/v3/files":
            return self._list(one("q"), one("driveId"), one("pageToken"), int(one("pageSize") or 100))
        m = re.fullmatch(r"/drive/v3/files/([^/]+)(/export|/permissions)?", path)
        if m is None:
            d = re.fullmatch(r"/drive/v3/drives/([^/]+)", path)
            if d and d.group(1) in self.drives:
                return 200, self.drives[d.group(1)], {}
            return 404, google_error(404, "notFound", "Not Found"), {}
        file_id, rest = m.group(1), m.group(2)
        if rest == "/permissions" and (file_id in self.files or file_id in self.drives):
            return self._page(
                "drive#permissionList",
                "permissions",
                self.permissions.get(file_id, []),
                one("pageToken"),
                min(int(one("pageSize") or 100), 100),
            )
        if file_id not in self.files:
            return 404, google_error(404, "notFound", f"File not found: {file_id}."), {}
        meta = self.files[file_id]
        if rest == "/export":
            if meta["mimeType"] not in (DOC, SHEET, SLIDES):
                return 400, google_error(400, "badRequest", "Export only supports Docs Editors files."), {}
            if len(self.media[file_id]) > EXPORT_LIMIT:
                return (
                    403,
                    google_error(403, "exportSizeLimitExceeded", "This file is too large to be exported."),
                    {},
                )
            return 200, self.media[file_id], {"Content-Type": one("mimeType")}
        if one("alt") == "media":
            if meta["mimeType"].startswith("application/vnd.google-apps."):
                return (
                    403,
                    google_error(
                        403,
                        "fileNotDownloadable",
                        "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                    ),
                    {},
                )
            return 200, self.media[file_id], {"Content-Type": meta["mimeType"]}
        return 200, meta, {}

    def _list(self, q: str, drive: str, token: str, size: int) -> Reply:
        inside = re.fullmatch(r"'([^']+)' in parents and trashed = false", q)
        if inside:
            found = [f for f in self.files.values() if inside.group(1) in f["parents"] and not f["trashed"]]
        elif q == "trashed = false" and drive:
            found = [f for f in self.files.values() if f.get("driveId") == drive and not f["trashed"]]
        else:
            return 400, google_error(400, "invalid", "Invalid Value"), {}
        return self._page(
            "drive#fileList", "files", sorted(found, key=lambda f: f["id"]), token, min(size, self.max_page)
        )

    def _changes(self, token: str, size: int, drive: str) -> Reply:
        if not token.isdigit() or not 1 <= int(token) <= len(self.changes) + 1:
            return 400, google_error(400, "invalid", "Invalid Value"), {}
        start, latest = int(token) - 1, {}
        for index, change in enumerate(self.changes[start:], start):
            latest[change["fileId"]] = index  # a file changed twice is listed once, in its latest state
        listed = sorted(latest.items(), key=lambda item: item[1])
        page = listed[: min(size, self.max_page)]
        body: dict[str, Any] = {
            "kind": "drive#changeList",
            "changes": [
                self._change(f, i)
                for f, i in page
                if not drive or self.files.get(f, {}).get("driveId", drive) == drive
            ],
        }
        if len(listed) > len(page):
            body["nextPageToken"] = str(page[-1][1] + 2)
        else:
            body["newStartPageToken"] = str(len(self.changes) + 1)
        return 200, body, {}

    def _change(self, file_id: str, index: int) -> dict[str, Any]:
        base = {
            "kind": "drive#change",
            "changeType": "file",
            "fileId": file_id,
            "time": self.changes[index]["time"],
        }
        meta = self.files.get(file_id)
        return base | ({"removed": False, "file": meta} if meta else {"removed": True})

    def _members(self, group: str, query: dict[str, list[str]], scopes: set[str]) -> Reply:
        if self.directory_forbidden or MEMBER_SCOPE not in scopes:
            return 403, google_error(403, "forbidden", "Not Authorized to access this resource/api"), {}
        if group not in self.groups:
            return 404, google_error(404, "notFound", "Resource Not Found: groupKey"), {}
        derived = (query.get("includeDerivedMembership") or ["false"])[0] == "true"
        members = self._flatten(group, set()) if derived else self.groups[group]
        size = min(int((query.get("maxResults") or ["200"])[0]), 200)
        return self._page(
            "admin#directory#members", "members", members, (query.get("pageToken") or [""])[0], size
        )

    def _flatten(self, group: str, seen: set[str]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for member in self.groups.get(group, []):
            found.append(member)
            if member.get("type") == "GROUP" and member["email"] not in seen:
                seen.add(member["email"])
                found += self._flatten(member["email"], seen)
        return found

    def _page(self, kind: str, key: str, items: list[Any], token: str, size: int) -> Reply:
        start = int(token) if token.isdigit() else 0
        body: dict[str, Any] = {"kind": kind, key: items[start : start + size]}
        if start + size < len(items):
            body["nextPageToken"] = str(start + size)
        return 200, body, {}

    def _as_user(self, email: str, path: str) -> Reply:
        if path == "/drive/v3/about":
            return (
                200,
                {
                    "kind": "drive#about",
                    "user": {
                        "kind": "drive#user",
                        "emailAddress": email,
                        "displayName": email.split("@")[0],
                        "permissionId": f"pid-{email}",
                    },
                },
                {},
            )
        m = re.fullmatch(r"/drive/v3/files/([^/]+)", path)
        if m and any(p.get("emailAddress") == email for p in self.permissions.get(m.group(1), [])):
            return 200, {"id": m.group(1)}, {}
        return 404, google_error(404, "notFound", "File not found."), {}

    def _token(self, form: dict[str, list[str]]) -> Reply:
        if (form.get("grant_type") or [""])[0] != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return 400, {"error": "unsupported_grant_type"}, {}
        claims = self._verified((form.get("assertion") or [""])[0])
        if claims is None:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}, {}
        if claims.get("aud") != f"{self.url}/token" or claims.get("exp", 0) <= claims.get("iat", 0):
            return (
                400,
                {"error": "invalid_grant", "error_description": "Invalid JWT: audience or expiry."},
                {},
            )
        if claims.get("sub") not in self.delegated:
            return (
                401,
                {
                    "error": "unauthorized_client",
                    "error_description": "Client is unauthorized to retrieve access tokens using this method.",
                },
                {},
            )
        token = f"ya29.fake-{len(self.issued) + 1}"
        self.issued[token] = set(str(claims.get("scope", "")).split())
        return 200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}, {}

    def _verified(self, assertion: str) -> dict[str, Any] | None:
        parts = assertion.split(".")
        if len(parts) != 3:
            return None
        pad = lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))  # noqa: E731
        try:
            self.account.key.public_key().verify(
                pad(parts[2]), f"{parts[0]}.{parts[1]}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
            claims = json.loads(pad(parts[1]))
        except (InvalidSignature, ValueError):
            return None
        return claims if isinstance(claims, dict) and claims.get("iss") == self.account.email else None


def _fault_reply(fault: Fault) -> Reply:
    messages = {
        "rateLimitExceeded": "Rate Limit Exceeded",
        "userRateLimitExceeded": "User Rate Limit Exceeded",
    }
    domain = "usageLimits" if fault.reason in messages else "global"
    return (
        fault.status,
        google_error(fault.status, fault.reason, messages.get(fault.reason, "Backend Error"), domain),
        fault.headers,
    )


def _handler(fake: FakeDrive) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer("GET", {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._answer("POST", parse_qs(self.rfile.read(length).decode()))

        def _answer(self, method: str, form: dict[str, list[str]]) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            with fake.lock:
                fake.requests.append((method, url.path, query))
                fault = take_fault(fake.faults, url.path) if url.path != "/token" else None
                if fault is not None:
                    status, body, headers = _fault_reply(fault)
                else:
                    status, body, headers = fake.route(
                        method, url.path, query, self.headers.get("Authorization", ""), form
                    )
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", headers.pop("Content-Type", "application/json; charset=UTF-8"))
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def serve_drive(fake: FakeDrive) -> Iterator[str]:
    """Drive, the Directory API and the token endpoint on one 127.0.0.1 port; yields its root URL."""
    with serve_http(_handler(fake)) as url:
        fake.url = url
        yield url
