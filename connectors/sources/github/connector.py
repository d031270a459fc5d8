"""GitHub connector: issues and pull requests by `updated_at`, repository by repository.

Cursor: `{"repos": {"owner/repo": <Watermark>}}`; a `Checkpoint` follows each page of each repository.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Generator, Iterator
from typing import Any

from pydantic import ValidationError

from connectors.base import Checkpoint, CurrentAcl, Cursor, Failure, Pulled, SourceDoc
from connectors.sources.access import UNMAPPED
from connectors.sources.github.client import GitHubClient
from connectors.sources.github.config import GitHubConfig
from connectors.sources.github.mapping import (
    Comment,
    Commit,
    Issue,
    doc_id,
    identity_principals,
    issue_to_doc,
    repo_acl,
)
from connectors.sources.rest import OwnsClient, RequestRejected, Watermark, bad_fields, counted

log = logging.getLogger(__name__)


class GitHubConnector(OwnsClient):
    kind = "github"
    config_model = GitHubConfig
    client_class = GitHubClient

    def pull(self, cursor: Cursor | None) -> Pulled:
        saved = (cursor or {}).get("repos") or {}
        marks = {repo: Watermark.load(saved.get(repo)) for repo in self._config.repos}
        counts: Counter[str] = Counter()
        for repo in self._config.repos:
            mark = marks[repo]
            acl = yield from self._acl(repo)
            since = mark.at.isoformat().replace("+00:00", "Z") if mark.at else None
            for page in self._client.issues(repo, since=since, page_size=self._config.page_size):
                yield from counted((self._item(repo, raw, mark, acl) for raw in page.issues), counts)
                yield Checkpoint(cursor=_cursor(marks))
        log.info("github pull finished", extra={"connector": self.name, **counts})
        return _cursor(marks)

    def list_ids(self) -> Iterator[str]:
        for repo in self._config.repos:
            yield from self._ids(repo)

    def acls(self) -> Iterator[CurrentAcl | Failure]:
        """Every issue's ACL: its repository's visibility, collaborators and teams (one listing per repo)."""
        for repo in self._config.repos:
            acl = yield from self._acl(repo)
            for item_id in self._ids(repo):
                yield CurrentAcl(id=item_id, acl=acl)

    def _ids(self, repo: str) -> Iterator[str]:
        for page in self._client.issues(repo, since=None, page_size=self._config.page_size):
            for raw in page.issues:
                if isinstance(raw, dict) and isinstance(raw.get("number"), int):
                    yield doc_id(self.name, repo, raw["number"])

    def _token_principals(self, access_token: str) -> set[str]:
        return identity_principals(*self._client.user_as(access_token), self.name)

    def can_open(self, doc_id: str, access_token: str, *, timeout_s: float) -> bool:
        """The live check (`connectors.base.LiveAccess`): the issue or pull request (GitHub serves both as
        issues) asked for with the user's own token; GitHub answers 404 for a repository they cannot read."""
        repo, _, number = doc_id.removeprefix(f"{self.name}:").rpartition("#")
        if not repo or "/" not in repo or not number.isdigit():
            raise ValueError("not an issue of this source")
        return bool(self._client.issue_opens_as(access_token, repo, int(number), timeout_s=timeout_s))

    def _acl(self, repo: str) -> Generator[Failure, None, frozenset[str]]:
        """The repository's ACL (returned); a failure first when an entry of it maps to no principal."""
        raw = self._client.repo(repo)
        if raw.get("private") is False and raw.get("visibility", "public") == "public":
            mapped = repo_acl(raw, [], [], self.name)
        else:
            mapped = repo_acl(raw, self._client.collaborators(repo), self._client.teams(repo), self.name)
        if mapped.unmapped:
            log.warning("github repository access unmapped", extra={"connector": self.name, "repo": repo})
            yield Failure(id=f"{self.name}:{repo.lower()}", reason=UNMAPPED, detail=mapped.detail())
        return mapped.restricted

    def _item(self, repo: str, raw: Any, mark: Watermark, acl: frozenset[str]) -> SourceDoc | Failure | None:
        try:
            issue = Issue.model_validate(raw)
        except ValidationError as exc:
            number = raw.get("number") if isinstance(raw, dict) else None
            log.warning(
                "github issue malformed", extra={"connector": self.name, "repo": repo, "number": number}
            )
            return Failure(
                id=f"{self.name}:{repo}#{number if number is not None else 'unknown'}",
                reason=f"malformed issue: {bad_fields(exc)}",
            )
        key = str(issue.number)
        if mark.seen(issue.updated_at, key):
            return None
        try:
            comments = (
                [Comment.model_validate(c) for c in self._client.comments(repo, issue.number)]
                if issue.comments
                else []
            )
            commits: list[Commit] = []
            if issue.is_pull and self._config.include_pr_commits:
                commits = [Commit.model_validate(c) for c in self._client.pr_commits(repo, issue.number)]
        except RequestRejected as exc:
            return Failure(id=doc_id(self.name, repo, issue.number), reason=str(exc))
        except ValidationError:
            return Failure(id=doc_id(self.name, repo, issue.number), reason="malformed comments or commits")
        finally:
            mark.advance(issue.updated_at, key)
        return issue_to_doc(issue, source=self.name, repo=repo, comments=comments, commits=commits, acl=acl)


def _cursor(marks: dict[str, Watermark]) -> dict[str, Any]:
    return {"repos": {repo: mark.dump() for repo, mark in marks.items()}}
