"""`-v` works after every command's name, as docs/slack.md writes `sleuth serve -v`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

from bot.cli import app


def _leaves(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    for name, sub in subcommands.items():
        yield from _leaves(sub, (*path, name))


def test_every_command_accepts_dash_v() -> None:
    missing = [
        " ".join(path)
        for path, command in _leaves(typer.main.get_command(app))
        if not any("-v" in getattr(p, "opts", []) for p in command.params)
    ]
    assert missing == []
