"""The only code that speaks HTTP to Google: Drive v3 (files, exports, permissions, changes) and the Admin SDK
Directory API (group members), through one `RestClient`.

Paging is Google's: `pageToken` in, `nextPageToken` out; the Changes API ends a listing with
`newStartPageToken`. Google says "slow down" with 429 or with 403 and a `rateLimitExceeded` /
`userRateLimitExceeded` reason in the error body; both are retried with backoff (`Retry-After` honoured when
sent), like 5xx. Other errors map as in `connectors.sources.rest`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Self

from connectors.base import AuthExpired
from connectors.sources.google_drive.auth import ServiceAccountAuth, ServiceAccountKey
from connectors.sources.google_drive.config import GoogleDriveConfig
from connectors.sources.rest import (
    HttpSettings,
    Params,
    ResponseLike,
    RestClient,
    RetryPolicy,
    Sleep,
    SourceClient,
    TokenStore,
    build_session,
    plain_session,
)

DRIVE = "/drive/v3"
FOLDER = "application/vnd.google-apps.folder"
FILE_FIELDS = "id,name,mimeType,modifiedTime,parents,webViewLink,driveId,size,trashed,version"
PERMISSION_FIELDS = "nextPageToken,permissions(id,type,role,emailAddress,domain,deleted,expirationTime)"
THROTTLE_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}
ALL_DRIVES: dict[str, str | bool] = {"supportsAllDrives": True}


def google_throttled(response: ResponseLike) -> bool:
    """Google's 403 that means "too many requests" (the body's reason says so), not "not allowed"."""
    if response.status_code != 403:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    errors = (body.get("error") or {}).get("errors") if isinstance(body, dict) else None
    return any(isinstance(e, dict) and e.get("reason") in THROTTLE_REASONS for e in errors or [])


@dataclass(frozen=True)
class ChangePage:
    changes: list[Any]
    next_token: str | None  # another page of this listing
    new_start: str | None  # the listing is over: where the next one starts


class DriveClient(SourceClient):
    label = "Google Drive"

    def __init__(self, rest: RestClient, *, user_api_url: str, timeout: float, directory_url: str) -> None:
        super().__init__(rest, user_api_url=user_api_url, timeout=timeout)
        self._directory = directory_url.rstrip("/") + "/admin/directory/v1"

    @classmethod
    def from_config(
        cls,
        config: GoogleDriveConfig,
        *,
        name: str,
        token_store: TokenStore | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        clock: Any = time.time,
    ) -> Self:
        settings = HttpSettings(config.api_url, config.timeout, cls.headers)
        if config.service_account_key is not None:
            key = ServiceAccountKey.parse(config.service_account_key)
            auth = ServiceAccountAuth(
                key,
                token_url=config.token_url,
                scopes=config.scopes,
                subject=str(config.delegated_user),
                clock=clock,
            )
            session: Any = plain_session(settings, auth)
        elif config.oauth is not None:
            session = build_session(
                settings, oauth=config.oauth, token_key=f"google_drive:{name}", token_store=token_store
            )
        else:
            raise AuthExpired("Google Drive has no credentials configured")
        rest = RestClient(session, source=cls.label, retry=retry, sleep=sleep, throttled=google_throttled)
        return cls(
            rest, user_api_url=config.api_url, timeout=config.timeout, directory_url=config.directory_url
        )

    # -- listings --

    def start_page_token(self, drive_id: str | None) -> str:
        params = ALL_DRIVES | ({"driveId": drive_id} if drive_id else {})
        return str(self._rest.get_json(f"{DRIVE}/changes/startPageToken", params)["startPageToken"])

    def changes(self, token: str, drive_id: str | None, page_size: int) -> Iterator[ChangePage]:
        params: dict[str, Any] = ALL_DRIVES | {
            "includeItemsFromAllDrives": True,
            "includeRemoved": True,
            "pageSize": page_size,
            "fields": f"nextPageToken,newStartPageToken,changes(changeType,removed,fileId,time,file({FILE_FIELDS}))",
        }
        if drive_id:
            params["driveId"] = drive_id
        while True:
            body = self._rest.get_json(f"{DRIVE}/changes", params | {"pageToken": token})
            page = ChangePage(
                list(body.get("changes") or []), body.get("nextPageToken"), body.get("newStartPageToken")
            )
            yield page
            if not page.next_token:
                return
            token = page.next_token

    def children(self, folder_id: str, page_size: int) -> Iterator[list[Any]]:
        """What a folder holds directly (not trashed), page by page."""
        query = f"'{folder_id}' in parents and trashed = false"
        yield from self._files(
            {"q": query, "corpora": "allDrives", "includeItemsFromAllDrives": True}, page_size
        )

    def drive_files(self, drive_id: str, page_size: int) -> Iterator[list[Any]]:
        """Every file of a shared drive (not trashed), page by page."""
        params = {
            "q": "trashed = false",
            "corpora": "drive",
            "driveId": drive_id,
            "includeItemsFromAllDrives": True,
        }
        yield from self._files(params, page_size)

    def _files(self, params: dict[str, Any], page_size: int) -> Iterator[list[Any]]:
        fixed = ALL_DRIVES | params | {"pageSize": page_size, "fields": f"nextPageToken,files({FILE_FIELDS})"}
        for body in self._pages(f"{DRIVE}/files", fixed):
            yield list(body.get("files") or [])

    def permissions(self, file_id: str) -> list[Any]:
        """Every permission of a file, folder or shared drive (a drive's id lists its members)."""
        params = ALL_DRIVES | {"fields": PERMISSION_FIELDS, "pageSize": 100}
        return [
            p
            for body in self._pages(f"{DRIVE}/files/{file_id}/permissions", params)
            for p in body.get("permissions") or []
        ]

    def members(self, group: str) -> list[Any]:
        """A group's members, nested groups' members included (Directory API)."""
        params = {"includeDerivedMembership": True, "maxResults": 200}
        url = f"{self._directory}/groups/{group}/members"
        return [m for body in self._pages(url, params) for m in body.get("members") or []]

    # -- content --

    def export(self, file_id: str, mime_type: str) -> bytes:
        return self._rest.request(
            "GET", f"{DRIVE}/files/{file_id}/export", params={"mimeType": mime_type}
        ).content

    def download(self, file_id: str) -> bytes:
        return self._rest.request(
            "GET", f"{DRIVE}/files/{file_id}", params=ALL_DRIVES | {"alt": "media"}
        ).content

    # -- as a linked user --

    def about_as(self, access_token: str) -> dict[str, Any]:
        """Who the linked user's own token belongs to (`about.get`)."""
        rest = self._as_user(access_token)
        try:
            body = rest.get_json(f"{DRIVE}/about", {"fields": "user(emailAddress,permissionId,displayName)"})
        finally:
            rest.close()
        return dict(body.get("user") or {}) if isinstance(body, dict) else {}

    def file_opens_as(self, access_token: str, file_id: str, *, timeout_s: float) -> bool:
        return self.opens_as(
            access_token, f"{DRIVE}/files/{file_id}?supportsAllDrives=true&fields=id", timeout_s=timeout_s
        )

    def _pages(self, url: str, params: Params) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            body = self._rest.get_json(url, dict(params) | ({"pageToken": token} if token else {}))
            yield body if isinstance(body, dict) else {}
            token = body.get("nextPageToken") if isinstance(body, dict) else None
            if not token:
                return
