"""The people file of a folder: who exists and which groups they are in.

```json
{"users": [{"email": "ann@team.io", "name": "Ann Lee", "groups": ["eng", "finance"]}]}
```
(`people.yaml` / `people.yml` with the same shape work too). A group is a bare name; the folder source grants
it as `group:<source>:<name>`, which is what a document's `group:<name>` ACL entry becomes.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from connectors.base import PUBLIC, group_principal, user_principal
from connectors.sources.folder.common import UnreadableItem, read_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Person:
    email: str
    name: str
    groups: tuple[str, ...]


def read_people(path: Path) -> list[Person]:
    """The people of a people file; [] when there is none. UnreadableItem when it cannot be read."""
    if not path.is_file():
        return []
    raw = read_text(path)
    try:
        data: Any = yaml.safe_load(raw) if path.suffix in {".yaml", ".yml"} else json.loads(raw)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise UnreadableItem("bad people file", exc.__class__.__name__) from exc
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, list):
        raise UnreadableItem("bad people file", 'expected {"users": [...]}')
    people = []
    for user in users:
        if isinstance(user, dict) and str(user.get("email", "")).strip():
            groups = tuple(str(g).strip().lower() for g in user.get("groups") or [] if str(g).strip())
            people.append(Person(str(user["email"]).strip().lower(), str(user.get("name") or ""), groups))
    return people


def people_or_none(path: Path) -> list[Person]:
    """For lookups that must not fail (principals of an asker): an unreadable file counts as empty, and the
    sync that reads it reports it as a failure."""
    try:
        return read_people(path)
    except (UnreadableItem, OSError):
        log.warning("people file unreadable", extra={"path": str(path)})
        return []


def person_principals(people: list[Person], source: str, account: str) -> set[str]:
    account = account.strip().lower()
    found = {PUBLIC, user_principal(account)}
    for person in people:
        if person.email == account:
            found.update(group_principal(source, g) for g in person.groups)
    return found


def known_principals(people: list[Person], source: str) -> set[str]:
    """Every principal someone in the people file holds in this source."""
    found = {PUBLIC}
    for person in people:
        found.add(user_principal(person.email))
        found.update(group_principal(source, g) for g in person.groups)
    return found
