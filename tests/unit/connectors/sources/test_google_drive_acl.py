"""Drive permissions -> principals, one row per kind of sharing (`mapping.permission_acl`), and the table
rendering of Sheets (`content.csv_table`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from connectors.sources.google_drive.content import csv_table
from connectors.sources.google_drive.mapping import member_principals, permission_acl

NOW = datetime(2025, 6, 1, tzinfo=UTC)
ANN = {"user:ann@acme.io", "user:drive:ann@acme.io"}
ENG = frozenset({"user:cy@acme.io", "user:drive:cy@acme.io"})


def members(group: str) -> frozenset[str] | None:
    return ENG if group == "eng@acme.io" else None


@pytest.mark.parametrize(
    ("perm", "link_shared_as", "principals", "unmapped"),
    [
        ({"type": "user", "role": "reader", "emailAddress": "Ann@acme.io"}, "nobody", ANN, False),
        ({"type": "user", "role": "owner", "emailAddress": "ann@acme.io"}, "nobody", ANN, False),
        ({"type": "group", "role": "writer", "emailAddress": "eng@acme.io"}, "nobody", {"group:drive:eng@acme.io", *ENG}, False),
        ({"type": "group", "role": "reader", "emailAddress": "ext@partner.io"}, "nobody", {"group:drive:ext@partner.io"}, False),
        ({"type": "domain", "role": "reader", "domain": "acme.io"}, "nobody", {"group:drive:domain:acme.io"}, False),
        ({"type": "domain", "role": "reader", "domain": "partner.io"}, "nobody", set(), True),
        ({"type": "anyone", "role": "reader"}, "nobody", set(), False),
        ({"type": "anyone", "role": "reader"}, "domain", {"group:drive:domain:acme.io"}, False),
        ({"type": "user", "role": "reader", "emailAddress": "ann@acme.io", "deleted": True}, "nobody", set(), False),
        ({"type": "user", "role": "reader", "emailAddress": "ann@acme.io", "expirationTime": "2025-05-01T00:00:00Z"}, "nobody", set(), False),
        ({"type": "user", "role": "reader", "emailAddress": "ann@acme.io", "expirationTime": "2025-07-01T00:00:00Z"}, "nobody", ANN, False),
        ({"type": "user", "role": "reader"}, "nobody", set(), True),
        ({"type": "user", "role": "mystery", "emailAddress": "ann@acme.io"}, "nobody", set(), True),
        ({"type": "audience", "role": "reader"}, "nobody", set(), True),
    ],
    ids=[
        "user", "owner", "group-expanded", "group-unlisted", "domain", "other-domain", "link-nobody",
        "link-domain", "deleted-account", "expired", "not-yet-expired", "user-without-email", "unknown-role",
        "unknown-type",
    ],
)  # fmt: skip
def test_permission_to_principals(
    perm: dict[str, object], link_shared_as: str, principals: set[str], unmapped: bool
) -> None:
    found = permission_acl(
        perm, source="drive", domains=["acme.io"], link_shared_as=link_shared_as, members=members, now=NOW
    )
    assert found.principals == principals
    assert bool(found.unmapped) is unmapped


def test_group_members_skip_suspended_accounts_and_name_the_whole_customer_as_the_domain() -> None:
    raw = [
        {"email": "cy@acme.io", "type": "USER", "status": "ACTIVE"},
        {"email": "gone@acme.io", "type": "USER", "status": "SUSPENDED"},
        {"email": "sre@acme.io", "type": "GROUP"},
        {"id": "C01", "type": "CUSTOMER"},
        "garbage",
    ]
    assert member_principals(raw, source="drive", domains=["acme.io"]) == {
        "user:cy@acme.io",
        "user:drive:cy@acme.io",
        "group:drive:sre@acme.io",
        "group:drive:domain:acme.io",
    }


def test_a_sheet_is_one_table_with_its_header_first_and_pipes_escaped() -> None:
    table = csv_table('Name,Note\nAnn,"a | b"\n,,\nBob\n')
    assert table.splitlines() == ["| Name | Note |", "|---|---|", "| Ann | a \\| b |", "| Bob |  |"]
