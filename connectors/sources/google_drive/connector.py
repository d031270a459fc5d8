"""Google Drive connector: the files under the picked folders (or in one shared drive), their text and who may
read them; incremental through the Changes API.

Cursor: `{"page_token": <changes token>, "roots": [...], "folders": {folder id: parent id}}` (the folders in
scope, so a change can tell whether a file is still under a picked folder). The first run takes a start page
token, then walks the folders; later runs read only `changes.list` from the saved token: an unchanged source
costs one listing call and no export. A file changed, moved in or re-shared is read again; one trashed,
deleted or moved out becomes `Deleted` (a folder moved out takes its subtree with it: the next listing no
longer holds its files, so sync prunes them). A `Checkpoint` follows each page of changes.

Askers: the Workspace directory is trusted (`trusts_directory`): a Slack-verified email gets its own shares
and its domain's; a linked Google account adds its own address (`about.get` with the user's token).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Generator, Iterator
from datetime import UTC, datetime
from typing import Any, ClassVar

from pydantic import ValidationError

from connectors.base import (
    PUBLIC,
    Checkpoint,
    CurrentAcl,
    Cursor,
    Deleted,
    Failure,
    Forbidden,
    LinkedIdentity,
    Pulled,
    Skipped,
    SourceDoc,
    account_principal,
    group_principal,
)
from connectors.sources.access import UNMAPPED_GRANT, Mapped
from connectors.sources.google_drive.client import FOLDER, DriveClient
from connectors.sources.google_drive.config import GoogleDriveConfig
from connectors.sources.google_drive.content import READINGS, Unreadable, to_text
from connectors.sources.google_drive.mapping import (
    DriveFile,
    doc_id,
    domain_principal,
    file_to_doc,
    member_principals,
    permission_acl,
    person,
)
from connectors.sources.rest import OwnsClient, RequestRejected, bad_fields, counted

log = logging.getLogger(__name__)

GROUP_UNLISTED = "group members Sleuth cannot list: the group's shares reach only askers who hold the group"
Item = SourceDoc | Deleted | Failure | Skipped


class GoogleDriveConnector(OwnsClient):
    kind = "google_drive"
    config_model = GoogleDriveConfig
    client_class = DriveClient
    trusts_directory: ClassVar[bool] = True  # Workspace accounts are the emails Slack verifies
    _config: GoogleDriveConfig
    _client: DriveClient

    def __init__(
        self, config: GoogleDriveConfig, *, name: str, client: Any = None, token_store: Any = None
    ) -> None:
        super().__init__(config, name=name, client=client, token_store=token_store)
        self.auth_kind = "oauth2" if config.oauth is not None else "api_token"
        self._members: dict[str, frozenset[str] | None] = {}
        self._drive_perms: dict[str, list[Any]] = {}

    # -- content sync --

    def pull(self, cursor: Cursor | None) -> Pulled:
        self._fresh_run()
        saved, roots = cursor or {}, self._roots()
        counts: Counter[str] = Counter()
        if not saved.get("page_token") or saved.get("roots") != roots:
            token = self._client.start_page_token(
                self._config.shared_drive
            )  # before the walk: nothing missed
            folders: dict[str, str | None] = {}
            yield from counted(self._read_all(self._walk(roots, folders)), counts)
            log.info("google drive full pull finished", extra={"connector": self.name, **counts})
            return _cursor(token, roots, folders)
        token, folders = str(saved["page_token"]), dict(saved.get("folders") or {})
        for page in self._client.changes(token, self._config.shared_drive, self._config.page_size):
            for change in page.changes:
                yield from counted(self._change(change, folders), counts)
            token = page.next_token or page.new_start or token
            yield Checkpoint(cursor=_cursor(token, roots, folders))
        log.info("google drive changes pulled", extra={"connector": self.name, **counts})
        return _cursor(token, roots, folders)

    def list_ids(self) -> Iterator[str]:
        for raw in self._walk(self._roots(), {}):
            yield doc_id(self.name, str(raw["id"]))

    def acls(self) -> Iterator[CurrentAcl | Failure]:
        """Every file's current permissions (group members read again), without its content."""
        self._fresh_run()
        for raw in self._walk(self._roots(), {}):
            try:
                file = DriveFile.model_validate(raw)
            except ValidationError:
                continue  # content sync reports it
            if file.mime_type in READINGS:
                acl = yield from self._acl(file)
                yield CurrentAcl(id=doc_id(self.name, file.id), acl=acl)

    # -- askers --

    def principals(self, identity: LinkedIdentity) -> set[str]:
        """A directory identity (`account` is the Slack-verified email) or a linked Google account."""
        email = identity.email or (identity.account if identity.access_token is None else None)
        found = {PUBLIC} | (
            {account_principal(self.name, identity.account)} if identity.access_token is None else set()
        )
        found |= self._person(email) if email else set()
        found |= {group_principal(self.name, group) for group in identity.groups}
        if identity.access_token:
            found |= self._token_principals(identity.access_token)
        return found

    def _token_principals(self, access_token: str) -> set[str]:
        """The linked Google account's own address, as Drive says it (its shares count even where group
        members cannot be listed)."""
        email = str(self._client.about_as(access_token).get("emailAddress") or "").strip().lower()
        return {account_principal(self.name, email)} | self._domain(email) if email else set()

    def _person(self, email: str) -> set[str]:
        return set(person(self.name, email)) | self._domain(email)

    def _domain(self, email: str) -> set[str]:
        domain = email.rpartition("@")[2].lower()
        return {domain_principal(self.name, domain)} if domain in self._config.domains else set()

    # -- reading --

    def _roots(self) -> list[str]:
        return [self._config.shared_drive] if self._config.shared_drive else list(self._config.folders)

    def _fresh_run(self) -> None:
        """Group members and drive members are read again each run (and cached within it)."""
        self._members, self._drive_perms = {}, {}

    def _walk(
        self, starts: list[str], folders: dict[str, str | None], parent: str | None = None
    ) -> Iterator[Any]:
        """The files (not folders) under `starts`, once each; `folders` gains every folder met."""
        if self._config.shared_drive:
            for page in self._client.drive_files(self._config.shared_drive, self._config.page_size):
                yield from (raw for raw in page if isinstance(raw, dict) and raw.get("mimeType") != FOLDER)
            return
        queue = list(starts)
        for start in starts:
            folders.setdefault(start, parent)
        seen: set[str] = set()
        while queue:
            folder = queue.pop(0)
            for page in self._client.children(folder, self._config.page_size):
                for raw in page:
                    if not isinstance(raw, dict) or not raw.get("id"):
                        continue
                    if raw.get("mimeType") == FOLDER:
                        if raw["id"] not in folders:
                            folders[raw["id"]] = folder
                            queue.append(raw["id"])
                    elif raw["id"] not in seen:
                        seen.add(raw["id"])
                        yield raw

    def _read_all(self, raws: Iterator[Any]) -> Iterator[Item]:
        for raw in raws:
            yield from self._read(raw)

    def _change(self, change: Any, folders: dict[str, str | None]) -> Iterator[Item]:
        if (
            not isinstance(change, dict)
            or change.get("changeType", "file") != "file"
            or not change.get("fileId")
        ):
            return
        file_id, raw = str(change["fileId"]), change.get("file")
        if change.get("removed") or not isinstance(raw, dict) or raw.get("trashed"):
            self._drop(file_id, folders)
            yield Deleted(id=doc_id(self.name, file_id))
            return
        parents = [str(p) for p in raw.get("parents") or []]
        inside = self._inside(file_id, raw.get("driveId"), parents, folders)
        if raw.get("mimeType") == FOLDER:
            if self._config.shared_drive:  # a shared drive's scope is the drive: folders change nothing
                return
            if inside and file_id not in folders:  # moved in (or new): read what it holds
                yield from self._read_all(
                    self._walk([file_id], folders, next(p for p in parents if p in folders))
                )
            elif not inside:
                self._drop(file_id, folders)
            return
        yield from self._read(raw) if inside else iter([Deleted(id=doc_id(self.name, file_id))])

    def _inside(self, file_id: str, drive: Any, parents: list[str], folders: dict[str, str | None]) -> bool:
        if self._config.shared_drive:
            return drive == self._config.shared_drive
        return file_id in self._config.folders or any(p in folders for p in parents)

    def _drop(self, folder: str, folders: dict[str, str | None]) -> None:
        """A folder left the scope: it and every folder beneath it (never a picked root)."""
        gone = {folder} - set(self._config.folders)
        while gone:
            for item in gone:
                folders.pop(item, None)
            gone = {k for k, v in folders.items() if v in gone} - set(self._config.folders)

    def _read(self, raw: Any) -> Iterator[Item]:
        try:
            file = DriveFile.model_validate(raw)
        except ValidationError as exc:
            yield Failure(
                id=doc_id(self.name, str(raw.get("id", "unknown"))),
                reason=f"malformed file: {bad_fields(exc)}",
            )
            return
        reading, me = READINGS.get(file.mime_type), doc_id(self.name, file.id)
        if reading is None:
            yield Skipped(id=me, reason=f"not a kind of file Sleuth reads ({file.mime_type})")
            return
        if file.size is not None and file.size > self._config.max_file_bytes:
            yield Skipped(id=me, reason="larger than max_file_bytes")
            return
        acl = yield from self._acl(file)
        try:
            data = (
                self._client.export(file.id, reading.export)
                if reading.export
                else self._client.download(file.id)
            )
            text = to_text(file.mime_type, data)
        except (Forbidden, RequestRejected) as exc:  # 403 exportSizeLimitExceeded, cannotDownloadFile, 404
            yield Failure(
                id=me, reason="Google Drive would not hand over the file's content", detail=str(exc)
            )
            return
        except Unreadable as exc:
            yield Failure(id=me, reason=str(exc))
            return
        yield file_to_doc(file, source=self.name, text=text, acl=acl)

    def _acl(self, file: DriveFile) -> Generator[Failure, None, frozenset[str]]:
        """Who may read the file: its permissions and its shared drive's members (grants: an entry Sleuth
        cannot map is left out and reported). A failure first for each group whose members cannot be listed."""
        me = doc_id(self.name, file.id)
        try:
            perms = list(self._client.permissions(file.id))
            if file.drive_id:
                perms += self._drive_members(file.drive_id)
        except RequestRejected as exc:
            yield Failure(id=me, reason="permissions unreadable: visible to no one", detail=str(exc))
            return frozenset()
        now, before = datetime.now(UTC), set(self._members)
        mapped = Mapped()
        for perm in perms:
            if isinstance(perm, dict):
                mapped |= permission_acl(
                    perm,
                    source=self.name,
                    domains=self._config.domains,
                    link_shared_as=self._config.treat_link_shared_as,
                    members=self._group_members,
                    now=now,
                )
        for group in sorted(set(self._members) - before):
            if self._members[group] is None and self._config.expand_groups:
                yield Failure(id=f"{self.name}:group:{group}", reason=GROUP_UNLISTED)
        if mapped.unmapped:
            log.warning("google drive permission unmapped", extra={"connector": self.name, "file": file.id})
            yield Failure(id=me, reason=UNMAPPED_GRANT, detail=mapped.detail())
        return mapped.principals

    def _drive_members(self, drive: str) -> list[Any]:
        if drive not in self._drive_perms:
            self._drive_perms[drive] = list(self._client.permissions(drive))
        return self._drive_perms[drive]

    def _group_members(self, group: str) -> frozenset[str] | None:
        if group not in self._members:
            self._members[group] = None
            if self._config.expand_groups:
                try:
                    raw = self._client.members(group)
                    self._members[group] = member_principals(
                        raw, source=self.name, domains=self._config.domains
                    )
                except (Forbidden, RequestRejected):  # no Directory access, or a group outside the directory
                    log.warning("google group members unlisted", extra={"connector": self.name})
        return self._members[group]


def _cursor(token: str, roots: list[str], folders: dict[str, str | None]) -> dict[str, Any]:
    return {"page_token": token, "roots": roots, "folders": dict(sorted(folders.items()))}
