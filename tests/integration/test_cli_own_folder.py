"""A newcomer's own folder through the `sleuth` command (the README walk-through): add it, sync it, see who is
known, ask as two people and see a private document hidden from one of them; and the ways that goes wrong
(a broken file, an ACL entry matching nobody, a mistyped --as) say so and exit non-zero."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from bot.cli import app

TEAM = Path(__file__).resolve().parents[1] / "fixtures" / "team"
BUDGET = "team:pages/budget-2027"

Cli = Callable[..., Result]


@pytest.fixture
def team(tmp_path: Path) -> Path:
    target = tmp_path / "team"
    shutil.copytree(TEAM, target)
    return target


@pytest.fixture
def cli(tmp_path: Path, team: Path) -> Cli:
    env: dict[str, str | None] = {
        "SLEUTH_DATA_DIR": str(tmp_path / "data"),
        "SLEUTH_EMBEDDER__KIND": "hash",
        "SLEUTH_DEFAULT_ASKER": None,
    }

    def run(*args: str, **more: str) -> Result:
        return CliRunner().invoke(app, list(args), env={**env, **more})

    added = run("sources", "add", "folder", "--name", "team", "--path", str(team))
    assert added.exit_code == 0, added.output
    return run


def _flat(result: Result) -> str:
    return " ".join(result.output.split())  # rich wraps long lines at the terminal width


def test_a_clean_folder_syncs_ok(cli: Cli) -> None:
    result = cli("sync", "team")
    assert result.exit_code == 0, result.output
    assert "sync team: ok" in _flat(result) and "failed" not in _flat(result).split("seconds", 1)[1]


def test_sync_permissions_says_what_it_did(cli: Cli) -> None:
    """A folder lists no ACLs apart from its files (its content sync re-reads every file's ACL): 'unsupported',
    not a failure."""
    cli("sync", "team")
    result = cli("sync", "--permissions", "team")
    assert result.exit_code == 0, result.output
    assert "permissions team: unsupported checked 0 changed 0" in _flat(result)


def test_a_broken_file_makes_the_sync_partial_exit_1_and_listed(cli: Cli, team: Path) -> None:
    (team / "tickets/NIM-9.md").write_text("---\nkey: NIM-9\nsummary: [unclosed\n---\nBody\n")
    result = cli("sync", "team")
    assert result.exit_code == 1
    out = _flat(result)
    assert "sync team: partial" in out
    assert "1 failed by reason: bad front matter 1" in out
    assert "team:tickets/NIM-9.md: bad front matter" in out
    listed = cli("sources", "failures", "team", "--json")
    assert listed.exit_code == 0
    assert [f["id"] for f in json.loads(listed.output)] == ["team:tickets/NIM-9.md"]
    (status,) = json.loads(cli("sources", "list", "--json").output)
    assert status["status"] == "partial" and status["summary"]["failures_by_reason"] == {
        "bad front matter": 1
    }


def test_an_acl_entry_matching_nobody_is_warned_about(cli: Cli, team: Path) -> None:
    (team / "pages/payroll.md").write_text("---\ntitle: Payroll\nacl: [group:finanse]\n---\nSalaries.\n")
    out = _flat(cli("sync", "team"))
    assert "warning: ACL entry group:team:finanse matches nobody in the people file" in out
    assert "pages/payroll" in out


def test_an_acl_entry_sleuth_cannot_map_hides_the_page_and_is_listed(cli: Cli, team: Path) -> None:
    """`team:leads` is no principal: the page is visible to no one, finance included, and
    `sleuth sources failures` says which entry did it."""
    (team / "pages/payroll.md").write_text("---\ntitle: Payroll\nacl: [group:finance, team:leads]\n---\nX.\n")
    assert cli("sync", "team").exit_code == 1  # partial: a failure
    listed = json.loads(cli("sources", "failures", "team", "--json").output)
    assert listed == [
        {
            "id": "team:pages/payroll",
            "reason": "restriction entry Sleuth cannot map: visible to no one (ACL entry 'team:leads')",
        }
    ]
    ben = json.loads(cli("whoami", "--as", "ben@nimbus.dev", "--json").output)
    assert (ben["total"], ben["visible"]) == (9, 4)  # finance: the page is not among ben's


def test_people_and_whoami_show_principals_and_what_each_may_see(cli: Cli) -> None:
    assert cli("sync", "team").exit_code == 0
    people = json.loads(cli("people", "--json").output)
    assert [p["email"] for p in people] == [
        "ann@nimbus.dev",
        "ben@nimbus.dev",
        "cho@nimbus.dev",
        "dev@nimbus.dev",
        "eva@nimbus.dev",
    ]
    assert people[1]["principals"] == ["group:team:finance", "public", "user:ben@nimbus.dev"]
    ben = json.loads(cli("whoami", "--as", "Ben@nimbus.dev", "--json").output)
    dev = json.loads(cli("whoami", "--as", "dev@nimbus.dev", "--json").output)
    assert ben["email"] == "ben@nimbus.dev" and ben["total"] == 8
    assert (ben["visible"], dev["visible"]) == (4, 2)  # ben: public 2 + finance 2; dev: public only


def test_an_unknown_as_is_an_error_with_a_hint(cli: Cli) -> None:
    result = cli("ask", "What is the 2027 budget?", "--as", "bem@nimbus.dev")
    assert result.exit_code == 2
    assert "did you mean ben@nimbus.dev?" in _flat(result) and "sleuth people" in _flat(result)
    assert cli("whoami", "--as", "nobody@elsewhere.org").exit_code == 2


def test_the_default_asker_comes_from_configuration_not_a_demo_user(cli: Cli) -> None:
    missing = cli("whoami")
    assert missing.exit_code == 2 and "SLEUTH_DEFAULT_ASKER" in _flat(missing)
    configured = cli("whoami", "--json", SLEUTH_DEFAULT_ASKER="eva@nimbus.dev")
    assert json.loads(configured.output)["email"] == "eva@nimbus.dev"


def test_asking_as_two_people_hides_the_private_page_from_one(cli: Cli) -> None:
    assert cli("sync", "team").exit_code == 0
    question = "What is the 2027 infrastructure budget?"
    ben = json.loads(cli("ask", question, "--as", "ben@nimbus.dev", "--json").output)
    dev = json.loads(cli("ask", question, "--as", "dev@nimbus.dev", "--json").output)
    assert BUDGET in {e["doc_id"] for e in ben["evidence"]}
    assert "410,000" in ben["answer"]["text"]
    assert BUDGET not in {e["doc_id"] for e in dev["evidence"]}
    assert "410,000" not in json.dumps(dev)


def test_themes_lists_what_the_given_person_may_see(cli: Cli) -> None:
    assert cli("sync", "team").exit_code == 0
    ben = json.loads(cli("themes", "--as", "ben@nimbus.dev", "--json").output)
    dev = json.loads(cli("themes", "--as", "dev@nimbus.dev", "--json").output)
    assert ben and dev
    assert sum(t["size"] for t in ben) > sum(t["size"] for t in dev)  # ben also sees the finance pages
    for seen in (ben, dev):  # numbered as each sees them: a theme they cannot see leaves no gap, no store id
        assert [t["n"] for t in seen] == list(range(1, len(seen) + 1)) and not any("id" in t for t in seen)
    assert "410" not in json.dumps(dev) and "budget" not in " ".join(t["label"] for t in dev).lower()
    shown = cli("themes", "--as", "dev@nimbus.dev")
    assert shown.exit_code == 0 and all(t["label"].split(" · ")[0] in _flat(shown) for t in dev)
