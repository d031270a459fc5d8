"""The only code that speaks HTTP to the GitHub REST API. Pages follow the `Link` header."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

from connectors.sources.github.config import GitHubConfig
from connectors.sources.rest import (
    HttpSettings,
    Params,
    RestClient,
    RetryPolicy,
    Sleep,
    TokenStore,
    bearer_session,
    build_session,
    next_link,
)

HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}


@dataclass(frozen=True)
class IssuePage:
    issues: list[Any]  # raw issues (pull requests carry a `pull_request` key)
    has_next: bool


class GitHubClient:
    def __init__(self, rest: RestClient, *, user_api_url: str, timeout: float = 30.0) -> None:
        self._rest = rest
        self._user_api_url = user_api_url
        self._timeout = timeout

    @classmethod
    def from_config(
        cls,
        config: GitHubConfig,
        *,
        name: str,
        token_store: TokenStore | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
    ) -> GitHubClient:
        settings = HttpSettings(config.base_url, config.timeout, HEADERS)
        session = build_session(
            settings,
            bearer=config.token,
            oauth=config.oauth,
            token_key=f"github:{name}",
            token_store=token_store,
        )
        rest = RestClient(session, source="GitHub", retry=retry, sleep=sleep)
        return cls(rest, user_api_url=config.user_api_url or config.base_url, timeout=config.timeout)

    def close(self) -> None:
        self._rest.close()

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

    def user_as(self, access_token: str) -> tuple[Any, list[Any], list[Any]]:
        """The linked user, their teams and their organisations, asked with their own token."""
        settings = HttpSettings(self._user_api_url, self._timeout, HEADERS)
        rest = RestClient(bearer_session(settings, SecretStr(access_token)), source="GitHub")
        try:
            me = rest.get_json("/user")
            return (
                me,
                self._all("/user/teams", {"per_page": 100}, rest),
                self._all("/user/orgs", {"per_page": 100}, rest),
            )
        finally:
            rest.close()
