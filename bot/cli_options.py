"""What every `sleuth` command group shares: logging set up from `-v`, taken before or after the command's
name. Its own module so that command groups living beside `bot.cli` (`bot.channels_cli`) need not import it."""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr)
    logging.getLogger().setLevel(logging.INFO if verbose else logging.ERROR)


def _verbose_option(value: bool) -> None:
    if value:
        configure_logging(True)


# Every command takes `-v` after its name too (`sleuth serve -v`), as the group does before it (`sleuth -v serve`).
Verbose = Annotated[
    bool, typer.Option("--verbose", "-v", help="Log at INFO to stderr", callback=_verbose_option)
]
