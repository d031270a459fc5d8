"""The only code that speaks HTTP to the GitHub REST API. Pages follow the `Link` header."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from connectors.sources.rest import (
    Params,
    RestClient,
    SourceClient,
    next_link,
)

HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}


@dataclass(frozen=True)
class IssuePage:
    issues: list[Any]  # raw issues (pull requests carry a `pull_request` key)
    has_next: bool


class GitHubClient(SourceClient):
    label = "GitHub"
    headers = HEADERS

    @staticmethod
    def credentials(config: Any) -> dict[str, Any]:
        return {"bearer": config.token}

    def _pages(self, rest: RestClient, url: str, params: Params | None) -> Iterator[tuple[list[Any], bool]]:
        next_url: str | None = url
        while next_url:
            response = rest.request("GET", next_url, params=params)
            body = response.json()
            next_url, params = next_link(response), None  # the next URL carries the query already
            yield (body if isinstance(body, list) else []), next_url is not None

    def _all(self, url: str, params: Params | None = None, rest: RestClient | None = None) -> list[Any]:
        return [item for page, _ in self._pages(rest or self._rest, url, params) for item in page]

    def repo(self, repo: str) -> Any:
        return self._rest.get_json(f"/repos/{repo}")

    def issues(self, repo: str, *, since: str | None, page_size: int) -> Iterator[IssuePage]:
        """Issues and pull requests, least recently updated first, from `since` (ISO 8601) on."""
        params: dict[str, Any] = {
            "state": "all",
            "sort": "updated",
            "direction": "asc",
            "per_page": page_size,
        }
        if since:
            params["since"] = since
        for page, has_next in self._pages(self._rest, f"/repos/{repo}/issues", params):
            yield IssuePage(page, has_next)

    def comments(self, repo: str, number: int) -> list[Any]:
        return self._all(f"/repos/{repo}/issues/{number}/comments", {"per_page": 100})

    def pr_commits(self, repo: str, number: int) -> list[Any]:
        return self._all(f"/repos/{repo}/pulls/{number}/commits", {"per_page": 100})

    def collaborators(self, repo: str) -> list[Any]:
        return self._all(f"/repos/{repo}/collaborators", {"per_page": 100})

    def teams(self, repo: str) -> list[Any]:
        return self._all(f"/repos/{repo}/teams", {"per_page": 100})

    def issue_opens_as(self, access_token: str, repo: str, number: int, *, timeout_s: float) -> bool:
        """Whether the token's user may read the issue or pull request now (404 for a hidden repository)."""
        return self.opens_as(access_token, f"/repos/{repo}/issues/{number}", timeout_s=timeout_s)

    def user_as(self, access_token: str) -> tuple[Any, list[Any], list[Any]]:
        """The linked user, their teams and their organisations, asked with their own token."""
        rest = self._as_user(access_token)
        try:
            me = rest.get_json("/user")
            return (
                me,
                self._all("/user/teams", {"per_page": 100}, rest),
                self._all("/user/orgs", {"per_page": 100}, rest),
            )
        finally:
            rest.close()
