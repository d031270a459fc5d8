"""The identity layer's errors; every message is safe to show to the user.

IdentityError > UnknownSource, InvalidLinkState, LinkFailed > LinkRefused. `LinkProblem` is the one that is
reported, not raised: a link the resolver cannot use while answering (it reads it without importing linking).
"""

from __future__ import annotations

from dataclasses import dataclass


class IdentityError(Exception):
    """Base of the identity layer's errors."""


class UnknownSource(IdentityError):
    def __init__(self, source: str) -> None:
        super().__init__(f"There is no source called {source!r} to link.")
        self.source = source


class InvalidLinkState(IdentityError):
    """The state is unknown, already used or expired: deliberately one error, one message, for all three."""

    def __init__(self) -> None:
        super().__init__("This sign-in link is invalid or has expired.")


class LinkFailed(IdentityError):
    """The provider did not complete the link (denied, bad code, PKCE mismatch, unreachable)."""

    def __init__(self, source: str, label: str, reason: str) -> None:
        super().__init__(f"Linking {label} did not finish. Run `/sleuth link {source}` to try again.")
        self.source = source
        self.reason = reason  # for logs: an OAuth error code or an HTTP failure class, never a token


class LinkRefused(LinkFailed):
    """The provider signed someone in, but that account may not be linked to the Slack user who started the
    link (its verified email is not theirs, or the provider did not verify it). The message says which account
    met which Slack user, so the person in the browser sees what was refused."""

    def __init__(self, source: str, label: str, reason: str, message: str) -> None:
        super().__init__(source, label, reason)
        self.args = (message,)


@dataclass(frozen=True)
class LinkProblem:
    """A link that cannot be used right now; `message` is meant for a private note to the user."""

    source: str
    message: str
