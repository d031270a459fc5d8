"""Jira ACL mapping, table-driven over every permission holder type the API documents (the Holder object of
permission schemes and issue security levels: anyone, applicationRole, assignee, group, groupCustomField,
projectLead, projectRole, reporter, sd.customer.portal.only, user, userCustomField) and every role actor shape
(`RoleActor`: actorGroup by name or id, actorUser by account id, `unknown` when deleted). Dynamic holders
(reporter, assignee, project lead, roles) are resolved by `JiraPermissions`, tested against the fake Jira."""

from __future__ import annotations

from typing import Any

import pytest

from connectors.base import PUBLIC
from connectors.sources.jira.mapping import actor_principals, holder_principals


@pytest.mark.parametrize(
    ("holder", "principals"),
    [
        ({"type": "anyone"}, {PUBLIC}),
        ({"type": "applicationRole"}, {"group:tracker:app:any"}),
        ({"type": "applicationRole", "parameter": "jira-software", "value": "jira-software"},
         {"group:tracker:app:jira-software"}),
        ({"type": "group", "parameter": "Jira-Users", "value": "g-1"}, {"group:tracker:jira-users"}),
        ({"type": "group", "value": "952d12c3-5b5b"}, None),  # by id only: an id is not a name
        ({"type": "group"}, None),
        ({"type": "user", "parameter": "acc-1", "user": {"emailAddress": "a@x.io"}},
         {"user:tracker:acc-1", "user:a@x.io"}),
        ({"type": "user", "value": "acc-1"}, {"user:tracker:acc-1"}),
        ({"type": "user", "parameter": "unknown"}, None),
        ({"type": "user"}, None),
        ({"type": "groupCustomField", "parameter": "customfield_1", "value": "customfield_1"}, None),
        ({"type": "userCustomField", "parameter": "customfield_2", "value": "customfield_2"}, None),
        ({"type": "sd.customer.portal.only"}, None),
        ({"type": "somethingNew", "parameter": "x"}, None),
        ({}, None),
    ],
    ids=["anyone", "app-any", "app-named", "group", "group-id-only", "group-empty", "user", "user-by-value",
         "user-unknown", "user-empty", "group-custom-field", "user-custom-field", "portal-customers",
         "undocumented", "untyped"],
)  # fmt: skip
def test_holders(holder: dict[str, Any], principals: set[str] | None) -> None:
    """`None`: the holder maps to no principal, is listed, and closes a security level it is part of."""
    found = holder_principals(holder, "tracker")  # the source's configured name, not its kind
    assert found.principals == (principals or set())
    assert bool(found.unmapped) is (principals is None)
    assert found.restricted == (principals or set())


@pytest.mark.parametrize(
    ("actor", "principals"),
    [
        ({"type": "atlassian-group-role-actor", "actorGroup": {"name": "Eng-Leads", "groupId": "g-2"}},
         {"group:tracker:eng-leads"}),
        ({"type": "atlassian-group-role-actor", "actorGroup": {"displayName": "Leads", "groupId": "g-2"}}, None),
        ({"type": "atlassian-user-role-actor", "actorUser": {"accountId": "acc-ann"}}, {"user:tracker:acc-ann"}),
        ({"type": "atlassian-user-role-actor", "actorUser": {"accountId": "unknown"}}, None),
        ({"type": "atlassian-user-role-actor", "displayName": "Ann"}, None),
    ],
    ids=["group", "group-id-only", "user", "user-unknown", "no-actor"],
)  # fmt: skip
def test_role_actors(actor: dict[str, Any], principals: set[str] | None) -> None:
    found = actor_principals({"actors": [actor]}, "tracker")
    assert found.principals == (principals or set())
    assert bool(found.unmapped) is (principals is None)
    beside = actor_principals({"actors": [actor, {"actorUser": {"accountId": "acc-x"}}]}, "tracker")
    assert beside.restricted == ({"user:tracker:acc-x", *principals} if principals else set())
