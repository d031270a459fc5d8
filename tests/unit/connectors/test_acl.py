"""Visibility rules as a table, and the Chroma filter they become."""

from __future__ import annotations

import pytest

from connectors.knowledge.acl import can_see, can_see_all, chroma_where


@pytest.mark.parametrize(
    ("acl", "principals", "visible"),
    [
        ({"public"}, {"public", "user:ann@acme.io"}, True),
        ({"group:acme:eng"}, {"user:ann@acme.io", "group:acme:eng"}, True),
        ({"group:acme:eng"}, {"public", "user:ann@acme.io"}, False),
        ({"user:bob@acme.io"}, {"public", "user:ann@acme.io"}, False),
        (set(), {"public", "user:ann@acme.io"}, False),  # no ACL means nobody, not everybody
    ],
    ids=["public", "member", "outsider", "other-user", "empty-acl"],
)
def test_visibility(acl: set[str], principals: set[str], visible: bool) -> None:
    assert can_see(principals, acl) is visible


def test_derived_content_needs_every_source() -> None:
    assert can_see_all({"public", "group:acme:eng"}, [{"public"}, {"group:acme:eng"}])
    assert not can_see_all({"public"}, [{"public"}, {"group:acme:eng"}])


def test_chroma_filter_shapes() -> None:
    assert chroma_where({"public"}) == {"acl": {"$contains": "public"}}
    assert chroma_where({"public", "group:a:b"}) == {
        "$or": [{"acl": {"$contains": "group:a:b"}}, {"acl": {"$contains": "public"}}]
    }
    with pytest.raises(ValueError):
        chroma_where(set())
