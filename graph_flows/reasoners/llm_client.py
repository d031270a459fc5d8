"""Talking to the chat model: provider wiring, retries, the per-question budget, and one repair attempt.

Errors (`reasoners.base` holds the root): ReasonerError > BadModelOutput (a reply that is not the JSON shape
asked for, even after one repair), ModelUnavailable (transport failed after retries, or the provider refused),
BudgetSpent (the question's call or token cap is reached). The reasoner turns each into an offline fallback.

Only 429, 5xx, timeouts and connection errors are retried, with backoff that honours Retry-After; the
provider SDK's own retries are off so there is one retry policy whatever the provider.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from graph_flows.reasoners.base import BadModelOutput, ReasonerError
from graph_flows.reasoners.prompts import REPAIR

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)
MAX_RETRY_AFTER_S = 30.0
MAX_LEDGERS = 512


class ModelUnavailable(ReasonerError):
    pass


class BudgetSpent(ReasonerError):
    pass


class LLMLimits(BaseModel):
    """Timeouts, retries and the per-question budget. Defaults suit a hosted model; tests shrink them."""

    temperature: float = Field(default=0.0, ge=0, le=2)
    timeout_s: float = Field(default=30.0, gt=0)
    attempts: int = Field(default=3, ge=1, le=8)  # per model call: 1 + retries on 429/5xx/timeouts
    backoff_s: float = Field(default=0.5, ge=0)  # first wait without Retry-After; doubles per retry
    max_backoff_s: float = Field(default=8.0, ge=0)
    max_calls: int = Field(default=12, ge=1)  # model requests per question, retries and repairs included
    max_tokens: int = Field(default=60_000, ge=1)  # input + output tokens per question
    max_output_tokens: int = Field(default=1500, ge=64)  # where the provider takes a cap (Anthropic, Ollama)
    max_passages: int = Field(default=20, ge=1)  # passages shown to the model per step


@dataclass
class Ledger:
    """What one question cost and what went wrong, for the trace and the bench."""

    run: str
    calls: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False  # some reply had no usage metadata; tokens estimated from characters
    unavailable: str | None = None  # set once transport failed: later steps skip the model
    fallbacks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    flagged: set[str] = field(default_factory=set)  # evidence ids already noted as instruction-like

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def usage(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "retries": self.retries,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens": self.tokens,
            "estimated": self.estimated,
            "fallbacks": list(self.fallbacks),
        }


class Ledgers:
    """Ledgers by question run id, bounded (oldest dropped) and safe to share between worker threads."""

    def __init__(self, size: int = MAX_LEDGERS) -> None:
        self._size = size
        self._items: OrderedDict[str, Ledger] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run: str) -> Ledger:
        with self._lock:
            ledger = self._items.get(run)
            if ledger is None:
                ledger = self._items[run] = Ledger(run=run)
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
            return ledger


def build_chat_model(
    model: str, *, base_url: str | None, api_key: str | None, limits: LLMLimits
) -> BaseChatModel:
    """`openai:<name>` (any OpenAI-compatible endpoint with base_url), `ollama:<name>`, `anthropic:<name>`;
    other LangChain providers get only the common options. Keys are passed explicitly, never read from env."""
    from langchain.chat_models import init_chat_model

    provider, _, name = model.partition(":") if ":" in model else ("openai", "", model)
    options: dict[str, Any] = {"temperature": limits.temperature}
    if provider == "openai":
        options |= {
            "api_key": api_key or "unused",
            "timeout": limits.timeout_s,
            "max_retries": 0,
            "model_kwargs": {"response_format": {"type": "json_object"}},
        }
    elif provider == "anthropic":
        options |= {
            "api_key": api_key or "unused",
            "timeout": limits.timeout_s,
            "max_retries": 0,
            "max_tokens": limits.max_output_tokens,
        }
    elif provider == "ollama":
        options |= {
            "format": "json",
            "num_predict": limits.max_output_tokens,
            "client_kwargs": {"timeout": limits.timeout_s},
        }
    elif api_key:
        options["api_key"] = api_key
    if base_url:
        options["base_url"] = base_url
    return init_chat_model(name, model_provider=provider, **options)


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors; never 4xx answers or our own errors."""
    status = _status(exc)
    if status is not None:
        return status == 429 or status >= 500
    if isinstance(exc, httpx.TransportError | TimeoutError | ConnectionError):
        return True
    return any(
        n in {"APITimeoutError", "APIConnectionError"} for n in (c.__name__ for c in type(exc).__mro__)
    )


class ModelClient:
    """One chat model plus the retry policy and the budget. `ask` returns a validated reply or raises."""

    def __init__(
        self, chat: BaseChatModel, limits: LLMLimits, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.chat = chat
        self.limits = limits
        self._sleep = sleep

    def ask(self, ledger: Ledger, system: str, user: str, schema: type[T], *, step: str) -> T:
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(user)]
        text = self._call(ledger, messages)
        try:
            return parse_reply(text, schema)
        except BadModelOutput as exc:
            ledger.notes.append(f"{step}: rejected reply ({exc}); one repair asked")
            messages += [AIMessage(text), HumanMessage(REPAIR.format(error=exc))]
        try:
            return parse_reply(self._call(ledger, messages), schema)
        except BadModelOutput as exc:
            raise BadModelOutput(f"{exc} (after one repair)") from exc

    def _call(self, ledger: Ledger, messages: list[BaseMessage]) -> str:
        def before_sleep(state: RetryCallState) -> None:
            ledger.retries += 1
            log.warning(
                "model call failed, retrying", extra={"attempt": state.attempt_number, "run": ledger.run}
            )

        retrying = Retrying(
            stop=stop_after_attempt(self.limits.attempts),
            wait=self._wait,
            retry=retry_if_exception(is_retryable),
            sleep=self._sleep,
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            reply = retrying(self._once, ledger, messages)
        except ReasonerError:
            raise
        except Exception as exc:  # provider SDKs raise their own trees; wrapped once, here
            ledger.unavailable = _describe(exc)
            raise ModelUnavailable(ledger.unavailable) from exc
        return reply

    def _once(self, ledger: Ledger, messages: list[BaseMessage]) -> str:
        if ledger.calls >= self.limits.max_calls:
            raise BudgetSpent(f"call cap {self.limits.max_calls} reached")
        if ledger.tokens >= self.limits.max_tokens:
            raise BudgetSpent(f"token cap {self.limits.max_tokens} reached ({ledger.tokens})")
        ledger.calls += 1
        reply = self.chat.invoke(messages)
        text = reply.text if isinstance(reply, AIMessage) else str(reply.content)
        usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
        if usage:
            ledger.input_tokens += int(usage.get("input_tokens", 0))
            ledger.output_tokens += int(usage.get("output_tokens", 0))
        else:
            ledger.estimated = True
            ledger.input_tokens += sum(len(str(m.content)) for m in messages) // 4
            ledger.output_tokens += len(text) // 4
        return text

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        retry_after = _retry_after(exc) if exc else None
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        return min(self.limits.backoff_s * 2 ** (state.attempt_number - 1), self.limits.max_backoff_s)


def parse_reply(text: str, schema: type[T]) -> T:
    """The reply as `schema`, or BadModelOutput with a short reason (sent back to the model to repair)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return schema.model_validate_json(body)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        if errors and errors[0]["type"] == "json_invalid":
            raise BadModelOutput(f"not valid JSON: {errors[0]['msg']}") from exc
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in errors[:5]]
        raise BadModelOutput("; ".join(parts)) from exc


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _describe(exc: BaseException) -> str:
    status = _status(exc)
    return f"{type(exc).__name__} (HTTP {status})" if status and status >= 400 else type(exc).__name__
