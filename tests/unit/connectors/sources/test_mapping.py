"""Pure mapping rules: GitHub references, watermarks, waits. (ACL mapping: test_<source>_acl.py.)"""

from __future__ import annotations

from datetime import UTC, datetime

from connectors.base import Link, LinkType
from connectors.sources.github.mapping import references
from connectors.sources.rest import Watermark, retry_after_seconds


def test_github_references_are_typed() -> None:
    text = "Fixes #3, closes org/Repo#4; duplicate of #9; see #10 and x#11 (not a ref: abc#12x)"
    found = references(text, source="gh", repo="acme/web")
    assert found == [
        Link(target="gh:acme/web#3", type=LinkType.RELATES),
        Link(target="gh:org/repo#4", type=LinkType.RELATES),
        Link(target="gh:acme/web#9", type=LinkType.DUPLICATES),
        Link(target="gh:acme/web#10", type=LinkType.MENTIONS),
    ]


def test_watermark_skips_only_what_was_processed() -> None:
    t1, t2 = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 2, tzinfo=UTC)
    mark = Watermark()
    mark.advance(t1, "a")
    mark.advance(t2, "b")
    mark.advance(t2, "c")
    again = Watermark.load(mark.dump())
    assert again.seen(t1, "z") and again.seen(t2, "b") and not again.seen(t2, "d")
    assert again.dump() == {"updated": t2.isoformat(), "ids": ["b", "c"]}


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 1970 00:01:40 GMT"}, now=40.0) == 60.0
    assert retry_after_seconds({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "130"}, now=100.0) == 30.0
    assert retry_after_seconds({"x-ratelimit-remaining": "5", "x-ratelimit-reset": "130"}) is None
