"""How a provider's error reads: its HTTP status, Retry-After, message, whether it is retried, and the words
the trace and `sleuth doctor --llm` show for it (never the provider's own text to an asker)."""

from __future__ import annotations

import json
import re

import httpx

CONTEXT_ERROR = re.compile(
    r"context.length|context window|maximum context|prompt is too long|too many tokens|"
    r"reduce the length|input is too long|exceeds? the (?:model's )?(?:max|context)|"
    r"exceeds? the available context size|exceed_context_size|larger than the max context size|"
    r"is too long and exceeds limit|(?:prompt|input) \(\d+ tokens\) is too long",
    re.I,
)  # OpenAI, Anthropic, llama.cpp (`exceed_context_size_error`, older "input is larger than ..."), vLLM


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors; never 4xx answers or our own errors."""
    status = status_of(exc)
    if status is not None:
        return status == 429 or status >= 500
    if isinstance(exc, httpx.TransportError | TimeoutError | ConnectionError):
        return True
    return any(
        n in {"APITimeoutError", "APIConnectionError"} for n in (c.__name__ for c in type(exc).__mro__)
    )


def is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return True
    return any(c.__name__ == "APITimeoutError" for c in type(exc).__mro__)


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def message_of(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    return f"{exc} {json.dumps(body) if isinstance(body, dict) else body or ''}"


HINTS = {
    401: "the key was refused: check SLEUTH_LLM_API_KEY",
    403: "the key may not use this model: check SLEUTH_LLM_API_KEY and SLEUTH_LLM_MODEL",
    404: "unknown model or URL: check SLEUTH_LLM_MODEL and SLEUTH_LLM_BASE_URL",
}


def describe(exc: BaseException) -> str:
    status = status_of(exc)
    if not status or status < 400:
        return type(exc).__name__
    hint = f": {HINTS[status]}" if status in HINTS else ""
    return f"{type(exc).__name__} (HTTP {status}{hint})"
