"""`sleuth channels list/set/unset`: per-channel setup from the command line (`bot.channels`).

Wiring only: the settings' rules live in `ChannelConfig`. Importing this module imports typer alone (the CLI's
start-up stays short); the database is opened inside each command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli_options import Verbose

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from bot.channels import ChannelSettings

channels_app = typer.Typer(
    help="Per-channel setup: answer mode, sources, escalation (admins).", no_args_is_help=True
)
CHANNEL_HELP = "A channel id (C...), or * for the default of channels without their own"
CLI_USER = "cli"


def _engine() -> Engine:
    from bot.runtime import Runtime
    from bot.settings import Settings

    return Runtime(Settings()).engine


def _settings(engine: Engine | None = None) -> ChannelSettings:
    from bot.channels import ChannelSettings

    return ChannelSettings(engine or _engine())


@channels_app.command("list")
def list_channels(verbose: Verbose = False) -> None:
    """Every configured channel and the default, and this week's and earlier weeks' question counts."""
    from bot.channel_activity import ChannelActivity, weekly_lines

    engine = _engine()
    found = _settings(engine).all()
    if not found:
        typer.echo("No channel settings: every channel answers when mentioned, from every source.")
    for channel, config in found.items():
        typer.echo(f"{channel}\t{config.summary()}")
    lines = weekly_lines(ChannelActivity(engine).weekly())
    if lines:
        typer.echo("\nQuestions by week:")
        typer.echo("\n".join(lines))


def _split(value: str | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(v.strip() for v in value.split(",") if v.strip())


@channels_app.command("set")
def set_channel(
    channel: Annotated[str, typer.Argument(help=CHANNEL_HELP)],
    answer: Annotated[str | None, typer.Option(help="mention | questions | off")] = None,
    sources: Annotated[
        str | None, typer.Option(help="Comma-separated sources or parts (acme/wiki/hr, jira/ENG); '' for all")
    ] = None,
    confident: Annotated[
        bool | None,
        typer.Option("--post-only-when-confident/--post-always", help="In `questions` mode, skip declines"),
    ] = None,
    escalate_to: Annotated[
        str | None, typer.Option(help="Comma-separated user (U...) and group (S...) ids")
    ] = None,
    reply: Annotated[str | None, typer.Option(help="thread | ephemeral")] = None,
    verbose: Verbose = False,
) -> None:
    """Sets the given fields of a channel's settings (the others keep their current value)."""
    from pydantic import ValidationError

    from bot.channels import ChannelConfig

    store = _settings()
    current = store.own(channel) or ChannelConfig()
    changes = {
        "answer": answer, "sources": _split(sources), "post_only_when_confident": confident,
        "escalate_to": _split(escalate_to), "reply": reply,
    }  # fmt: skip
    try:
        config = ChannelConfig.model_validate(
            {**current.model_dump(), **{k: v for k, v in changes.items() if v is not None}}
        )
    except ValidationError as exc:
        typer.echo(f"Not set: {exc.errors()[0]['msg']}", err=True)
        raise typer.Exit(2) from exc
    store.set(channel, config, by=CLI_USER)
    typer.echo(f"{channel}\t{config.summary()}")


@channels_app.command("unset")
def unset_channel(
    channel: Annotated[str, typer.Argument(help=CHANNEL_HELP)], verbose: Verbose = False
) -> None:
    """Removes a channel's own settings: it follows the default again."""
    if _settings().unset(channel):
        typer.echo(f"{channel}: settings removed")
        return
    typer.echo(f"{channel} had no settings of its own")
