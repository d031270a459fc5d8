"""Structured log context: `team`, `channel`, `thread`, `user`, `job` on every record made while a job or a
Slack request is handled. The job worker and a Bolt middleware set it; a `logging.Filter` copies it onto records.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_context: ContextVar[dict[str, object]] = ContextVar("sleuth_log_context", default={})  # noqa: B039


@contextmanager
def log_context(**fields: object) -> Iterator[None]:
    token = _context.set({**_context.get(), **{k: v for k, v in fields.items() if v is not None}})
    try:
        yield
    finally:
        _context.reset(token)


class ContextFilter(logging.Filter):
    """Adds the current context to each record (fields set with `extra=` win)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in _context.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Puts the filter on every handler of `logger` (root by default); `cli.py` calls it once."""
    target = logger or logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, ContextFilter) for f in handler.filters):
            handler.addFilter(ContextFilter())
