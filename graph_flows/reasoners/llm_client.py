"""Talking to the chat model: provider wiring, native structured output, retries, the question's deadline and
budget, and one repair attempt.

Errors (`reasoners.base` holds the root): ReasonerError > BadModelOutput (a reply that cannot be read as the
shape asked for, even after one repair, or a refusal), ModelUnavailable (transport failed after retries, or the
provider refused the request), BudgetSpent (the question's calls, tokens or time are spent), ContextTooLong
(the prompt does not fit the model's window: the reasoner shows fewer passages and asks again). The reasoner
turns each into an offline fallback, with the reason in the trace.

Structured output is the provider's own, through LangChain's `with_structured_output`: `json_schema` for
OpenAI-compatible servers (vLLM included) and Ollama, `function_calling` (a forced tool) for Anthropic. The
schema shown is `llm_schemas.model_schema`; the reply is read by `llm_reply.parse_reply`, which forgives what
strict modes cannot promise (prose or fences around the JSON, a tool call instead of content, extra keys, nulls).

Only 429, 5xx, timeouts and connection errors are retried, with backoff that honours Retry-After and never
waits past the deadline; the provider SDK's own retries are off so there is one retry policy whatever the
provider. Every call runs under the question's deadline: a call that outlives it is abandoned.
"""

from __future__ import annotations

import contextvars
import json
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
from pydantic import BaseModel
from tenacity import RetryCallState, Retrying, retry_if_exception

from graph_flows.config import LLMLimits, StructuredMethod
from graph_flows.reasoners.base import BadModelOutput, ReasonerError
from graph_flows.reasoners.llm_reply import Reply, parse_reply, reply_of
from graph_flows.reasoners.llm_schemas import model_schema
from graph_flows.reasoners.prompts import REPAIR, SHORTER

log = logging.getLogger(__name__)
__all__ = ["LLMLimits", "Ledger", "Ledgers", "ModelClient", "build_chat_model"]

T = TypeVar("T", bound=BaseModel)
MAX_RETRY_AFTER_S = 30.0
MAX_LEDGERS = 512
_CONTEXT_ERROR = re.compile(
    r"context.length|context window|maximum context|prompt is too long|too many tokens|"
    r"reduce the length|input is too long|exceeds? the (?:model's )?(?:max|context)",
    re.I,
)
HEARTBEAT: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "sleuth_llm_heartbeat", default=None
)  # set by the job worker: called before every model call, so a long question keeps its lease


class ModelUnavailable(ReasonerError):
    pass


class BudgetSpent(ReasonerError):
    pass


class ContextTooLong(ReasonerError):
    pass


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
    deadline: float | None = None  # monotonic time by which the question's last call must end
    steps: int = 0  # steps asked of the model (plan, each reflect, compose)
    offline_added: int = 0  # aspects and sentences the second reader added to the model's (`llm_merge`)
    offline_established: dict[str, list[str]] = field(default_factory=dict)  # the second reader's, last round
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
            "steps": self.steps,
            "fallbacks": list(self.fallbacks),
            "fallback_rate": round(len(self.fallbacks) / self.steps, 2) if self.steps else 0.0,
            "offline_added": self.offline_added,
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


def provider_of(model: str) -> tuple[str, str]:
    """`openai:gpt-4o-mini` -> ("openai", "gpt-4o-mini"); a bare name is an OpenAI-compatible model."""
    provider, _, name = model.partition(":") if ":" in model else ("openai", "", model)
    return provider, name


def build_chat_model(
    model: str, *, base_url: str | None, api_key: str | None, limits: LLMLimits
) -> BaseChatModel:
    """`openai:<name>` (any OpenAI-compatible endpoint with base_url: vLLM, llama.cpp, LM Studio...),
    `ollama:<name>`, `anthropic:<name>`; other LangChain providers get only the common options. Keys are
    passed explicitly, never read from the environment. Every reply is capped at `max_output_tokens`, and
    Ollama gets `num_ctx` (its default window of 2-4k tokens silently cuts the prompt)."""
    from langchain.chat_models import init_chat_model

    provider, name = provider_of(model)
    options: dict[str, Any] = {"temperature": limits.temperature}
    if provider in {"openai", "anthropic"}:
        options |= {
            "api_key": api_key or "unused",
            "timeout": limits.timeout_s,
            "max_retries": 0,
            "max_tokens": limits.max_output_tokens,
        }
    elif provider == "ollama":
        options |= {
            "num_ctx": limits.context_tokens,
            "num_predict": limits.max_output_tokens,
            "client_kwargs": {"timeout": limits.timeout_s},
        }
    elif api_key:
        options["api_key"] = api_key
    if base_url:
        options["base_url"] = base_url
    return init_chat_model(name, model_provider=provider, **options)


def structured_method(provider: str, configured: StructuredMethod) -> str:
    if configured != "auto":
        return configured
    return "json_schema" if provider in {"openai", "ollama"} else "function_calling"


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
    """One chat model plus the retry policy, the deadline and the budget. `ask` returns a reply read as
    `schema`, or raises."""

    def __init__(
        self,
        chat: BaseChatModel,
        limits: LLMLimits,
        *,
        provider: str = "openai",
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.chat = chat
        self.limits = limits
        self.provider = provider
        self.method = structured_method(provider, limits.structured_output)
        self._sleep = sleep
        self.clock = clock

    def start(self, ledger: Ledger) -> None:
        """Starts the question's clock: every call of it ends by `question_budget_s` from now."""
        ledger.deadline = self.clock() + self.limits.question_budget_s

    def ask(self, ledger: Ledger, system: str, user: str, schema: type[T], *, step: str) -> T:
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(user)]
        reply = self._call(ledger, messages, schema, step)
        try:
            return parse_reply(reply, schema)
        except BadModelOutput as exc:
            if reply.refusal is not None:
                raise
            if reply.truncated:
                ledger.notes.append(f"{step}: reply cut at the output cap ({exc}); asked again, shorter")
                messages = [SystemMessage(system), HumanMessage(f"{user}\n\n{SHORTER}")]
            else:
                ledger.notes.append(f"{step}: rejected reply ({exc}); one repair asked")
                previous = [AIMessage(reply.text)] if reply.text.strip() else []
                messages += [*previous, HumanMessage(REPAIR.format(error=exc))]
        try:
            return parse_reply(self._call(ledger, messages, schema, step), schema)
        except BadModelOutput as exc:
            raise BadModelOutput(f"{exc} (after one repair)") from exc

    def remaining(self, ledger: Ledger, step: str) -> float:
        """Seconds this step may still spend; plan and reflect leave `compose_reserve_s` for compose."""
        if ledger.deadline is None:
            return float("inf")
        reserve = 0.0 if step == "compose" else self.limits.compose_reserve_s
        return ledger.deadline - reserve - self.clock()

    def _call(self, ledger: Ledger, messages: list[BaseMessage], schema: type[BaseModel], step: str) -> Reply:
        def before_sleep(state: RetryCallState) -> None:
            ledger.retries += 1
            log.warning(
                "model call failed, retrying", extra={"attempt": state.attempt_number, "run": ledger.run}
            )

        def stop(state: RetryCallState) -> bool:
            if state.attempt_number >= self.limits.attempts:
                return True
            return self.remaining(ledger, step) - self._wait(state) < self.limits.min_call_s

        retrying = Retrying(
            stop=stop,
            wait=self._wait,
            retry=retry_if_exception(is_retryable),
            sleep=self._sleep,
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            return retrying(self._once, ledger, messages, schema, step)
        except ReasonerError:
            raise
        except Exception as exc:  # provider SDKs raise their own trees; wrapped once, here
            if _status(exc) in {400, 413, 422} and _CONTEXT_ERROR.search(_message(exc)):
                raise ContextTooLong(
                    f"the prompt does not fit the model's context ({_describe(exc)})"
                ) from exc
            if _status(exc) == 400 and "temperature" in _message(exc).lower() and self._drop_temperature():
                ledger.notes.append(f"{step}: the model rejects temperature; sent without it from now on")
                return self._call(ledger, messages, schema, step)
            ledger.unavailable = _describe(exc)
            raise ModelUnavailable(ledger.unavailable) from exc

    def _once(self, ledger: Ledger, messages: list[BaseMessage], schema: type[BaseModel], step: str) -> Reply:
        if ledger.calls >= self.limits.max_calls:
            raise BudgetSpent(f"call cap {self.limits.max_calls} reached")
        if ledger.tokens >= self.limits.max_tokens:
            raise BudgetSpent(f"token cap {self.limits.max_tokens} reached ({ledger.tokens})")
        left = self.remaining(ledger, step)
        if left < self.limits.min_call_s:
            raise BudgetSpent(f"deadline: {max(0.0, left):.1f}s left for {step}")
        beat = HEARTBEAT.get()
        if beat is not None:
            beat()
        ledger.calls += 1
        strict = {"strict": True} if self.provider == "openai" and self.method == "json_schema" else {}
        runnable = self.chat.with_structured_output(
            model_schema(schema),
            method=self.method,  # type: ignore[arg-type]
            include_raw=True,
            **strict,
        )
        try:
            out = _within(lambda: runnable.invoke(messages), min(left, self.limits.timeout_s + 1.0))
        except Exception as exc:
            if type(exc).__name__ != "LengthFinishReasonError":  # the OpenAI SDK's word for a cut reply
                raise
            return self._cut(ledger, exc)
        raw = out["raw"] if isinstance(out, dict) else out
        if not isinstance(raw, AIMessage):
            raise BadModelOutput(f"unexpected reply type {type(raw).__name__}")
        reply = reply_of(raw)
        usage = raw.usage_metadata
        if usage:
            ledger.input_tokens += int(usage.get("input_tokens", 0))
            ledger.output_tokens += int(usage.get("output_tokens", 0))
        else:
            ledger.estimated = True
            ledger.input_tokens += sum(len(str(m.content)) for m in messages) // 4
            ledger.output_tokens += len(reply.text) // 4
        return reply

    def _cut(self, ledger: Ledger, exc: Exception) -> Reply:
        completion = getattr(exc, "completion", None)
        choices = getattr(completion, "choices", None) or []
        text = (getattr(choices[0].message, "content", None) or "") if choices else ""
        usage = getattr(completion, "usage", None)
        ledger.input_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
        ledger.output_tokens += int(getattr(usage, "completion_tokens", 0) or self.limits.max_output_tokens)
        return Reply(text=text, truncated=True)

    def _drop_temperature(self) -> bool:
        if getattr(self.chat, "temperature", None) is None:
            return False
        self.chat = self.chat.model_copy(update={"temperature": None})
        return True

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        retry_after = _retry_after(exc) if exc else None
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        return min(self.limits.backoff_s * 2 ** (state.attempt_number - 1), self.limits.max_backoff_s)


def _within(call: Callable[[], Any], seconds: float) -> Any:
    """Runs `call`, abandoning it after `seconds` (it ends on its own request timeout, in its thread)."""
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def run() -> None:
        try:
            box["out"] = context.run(call)
        except BaseException as exc:  # handed to the caller's thread as is
            box["error"] = exc

    thread = threading.Thread(target=run, name="sleuth-llm-call", daemon=True)
    thread.start()
    thread.join(max(0.0, seconds))
    if thread.is_alive():
        raise TimeoutError(f"no reply within {seconds:.1f}s")
    if "error" in box:
        raise box["error"]
    return box["out"]


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


def _message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    return f"{exc} {json.dumps(body) if isinstance(body, dict) else body or ''}"


_HINTS = {
    401: "the key was refused: check SLEUTH_LLM_API_KEY",
    403: "the key may not use this model: check SLEUTH_LLM_API_KEY and SLEUTH_LLM_MODEL",
    404: "unknown model or URL: check SLEUTH_LLM_MODEL and SLEUTH_LLM_BASE_URL",
}


def _describe(exc: BaseException) -> str:
    status = _status(exc)
    if not status or status < 400:
        return type(exc).__name__
    hint = f": {_HINTS[status]}" if status in _HINTS else ""
    return f"{type(exc).__name__} (HTTP {status}{hint})"
