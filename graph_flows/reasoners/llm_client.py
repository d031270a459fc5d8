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
provider. Every call runs under the question's deadline: a call that outlives it is abandoned and its stream
closed (`llm_call`). A call first takes one of the model's slots (`llm_slots`, `max_in_flight` per model and
host across processes), so askers queue here, not at a single-slot server. A timeout costs the step, never the
question: only a refusal of the request (4xx) or a server that stays down marks the model unavailable for the
question's later steps.

Provider quirks handled before or after the call: the newest Claude models and OpenAI's reasoning models get
no temperature (`llm_call.takes_temperature`); a reasoning model that spends the whole output cap on reasoning
(empty content, finish reason `length`) is asked once more with twice the cap and `reasoning_effort` low;
OpenAI-compatible local servers get `max_tokens` beside `max_completion_tokens` (`send_max_tokens`); llama.cpp's
and vLLM's words for a prompt over the window are read as OpenAI's, so fewer passages are shown.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel
from tenacity import RetryCallState, Retrying, retry_if_exception

from graph_flows.config import LLMLimits, StructuredMethod
from graph_flows.reasoners.base import BadModelOutput, ReasonerError
from graph_flows.reasoners.llm_call import TextSink, bound, is_reasoning, stream, takes_temperature, within
from graph_flows.reasoners.llm_errors import (
    CONTEXT_ERROR,
    describe,
    is_retryable,
    is_timeout,
    message_of,
    retry_after,
    status_of,
)
from graph_flows.reasoners.llm_ledger import Ledger, Ledgers
from graph_flows.reasoners.llm_reply import Reply, parse_reply, reply_of
from graph_flows.reasoners.llm_schemas import model_schema
from graph_flows.reasoners.llm_slots import Slots, SlotTimeout
from graph_flows.reasoners.prompts import REPAIR, SHORTER, cache_blocks

log = logging.getLogger(__name__)
__all__ = ["LLMLimits", "Ledger", "Ledgers", "ModelClient", "build_chat_model", "is_retryable"]

T = TypeVar("T", bound=BaseModel)
MAX_RETRY_AFTER_S = 30.0
MAX_REASONING_CAP = 16_000
HEARTBEAT: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "sleuth_llm_heartbeat", default=None
)  # set by the job worker: called before every model call, so a long question keeps its lease


class ModelUnavailable(ReasonerError):
    pass


class ModelSlow(ModelUnavailable):
    """The step's calls timed out or found no free slot: this step falls back, later steps still ask."""


class BudgetSpent(ReasonerError):
    pass


class ContextTooLong(ReasonerError):
    pass


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
    Ollama gets `num_ctx` (its default window of 2-4k tokens silently cuts the prompt). `limits` are the
    resolved ones (`llm_presets.resolved`)."""
    from langchain.chat_models import init_chat_model

    provider, name = provider_of(model)
    options: dict[str, Any] = {}
    if limits.temperature is not None and takes_temperature(provider, name):
        options["temperature"] = limits.temperature
    if provider in {"openai", "anthropic"}:
        options |= {
            "api_key": api_key or "unused",
            "timeout": limits.timeout_s,
            "max_retries": 0,
            "max_tokens": limits.max_output_tokens,
        }
        if provider == "openai":
            options["stream_usage"] = True
            if limits.send_max_tokens:  # older llama.cpp builds read only this one
                options["extra_body"] = {"max_tokens": limits.max_output_tokens}
        if limits.reasoning_effort and is_reasoning(provider, name):
            effort = limits.reasoning_effort
            options["reasoning_effort"] = "low" if provider == "anthropic" and effort == "minimal" else effort
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
    if provider == "openai":
        from graph_flows.reasoners.llm_openai import StreamingChatOpenAI

        return StreamingChatOpenAI(model=name, **options)
    return init_chat_model(name, model_provider=provider, **options)


def structured_method(provider: str, configured: StructuredMethod, name: str = "") -> str:
    """auto: `json_schema` for OpenAI-compatible servers and Ollama, a forced tool for Anthropic, except the
    newest Claude models, which think adaptively and so take no forced tool: their `output_config` schema."""
    if configured != "auto":
        return configured
    if provider == "anthropic":
        return "function_calling" if takes_temperature(provider, name) else "json_schema"
    return "json_schema" if provider in {"openai", "ollama"} else "function_calling"


class ModelClient:
    """One chat model plus the retry policy, the deadline, the budget and the model's slots. `ask` returns a
    reply read as `schema`, or raises."""

    def __init__(
        self,
        chat: BaseChatModel,
        limits: LLMLimits,
        *,
        provider: str = "openai",
        name: str = "",
        slots: Slots | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.chat = chat
        self.limits = limits
        self.provider = provider
        self.name = name
        self.method = structured_method(provider, limits.structured_output, name)
        self.slots = slots
        self.on_text: Callable[[str, str], None] | None = None  # (step, text so far): the stream, as written
        self._sleep = sleep
        self.clock = clock

    def start(self, ledger: Ledger) -> None:
        """Starts the question's clock: every call of it ends by `question_budget_s` from now."""
        ledger.deadline = self.clock() + self.limits.question_budget_s

    def ask(
        self,
        ledger: Ledger,
        system: str,
        user: str,
        schema: type[T],
        *,
        step: str,
        on_text: TextSink | None = None,
    ) -> T:
        """`on_text(text so far)`: this question's own view of each reply as it is written (a new call, a
        retry or a repair, starts its text again); `self.on_text` stays for the doctor's timing."""
        messages = self._messages(system, user)
        call = functools.partial(self._call, on_text=on_text)
        reply = call(ledger, messages, schema, step)
        if reply.truncated and not reply.text.strip() and not reply.args and self._roomier():
            ledger.notes.append(
                f"{step}: the reply was empty at the output cap (spent on reasoning); asked again with "
                "twice the cap and low reasoning effort"
            )
            reply = call(ledger, messages, schema, step)
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
            return parse_reply(call(ledger, messages, schema, step), schema)
        except BadModelOutput as exc:
            raise BadModelOutput(f"{exc} (after one repair)") from exc

    def _messages(self, system: str, user: str) -> list[BaseMessage]:
        """Anthropic's requests mark the stable prefix (the system prompt, the passages) for its cache."""
        if self.provider != "anthropic":
            return [SystemMessage(system), HumanMessage(user)]
        marked = {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
        return [SystemMessage(content=[marked]), HumanMessage(content=cache_blocks(user))]

    def remaining(self, ledger: Ledger, step: str) -> float:
        """Seconds this step may still spend; plan and reflect leave `compose_reserve_s` for compose."""
        if ledger.deadline is None:
            return float("inf")
        reserve = 0.0 if step == "compose" else self.limits.compose_reserve_s
        return ledger.deadline - reserve - self.clock()

    def _call(
        self,
        ledger: Ledger,
        messages: list[BaseMessage],
        schema: type[BaseModel],
        step: str,
        *,
        on_text: TextSink | None = None,
    ) -> Reply:
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
            return retrying(self._once, ledger, messages, schema, step, on_text)
        except ReasonerError:
            raise
        except Exception as exc:  # provider SDKs raise their own trees; wrapped once, here
            return self._failed(exc, ledger, messages, schema, step, on_text)

    def _failed(
        self,
        exc: Exception,
        ledger: Ledger,
        messages: list[BaseMessage],
        schema: type[BaseModel],
        step: str,
        on_text: TextSink | None,
    ) -> Reply:
        """A call that failed for good: a quirk met by changing the request and asking again, or an error."""
        status, message = status_of(exc), message_of(exc).lower()
        if status in {400, 413, 422, 500} and CONTEXT_ERROR.search(message):
            raise ContextTooLong(f"the prompt does not fit the model's context ({describe(exc)})") from exc
        if is_timeout(exc) or isinstance(exc, SlotTimeout):
            raise ModelSlow(f"no reply in time ({describe(exc)})") from exc
        quirk = self._quirk(status, message, exc)
        if quirk:
            ledger.notes.append(f"{step}: {quirk}; sent that way from now on")
            return self._call(ledger, messages, schema, step, on_text=on_text)
        ledger.unavailable = describe(exc)
        raise ModelUnavailable(ledger.unavailable) from exc

    def _quirk(self, status: int | None, message: str, exc: Exception) -> str | None:
        """What to change in the request when the model refused a parameter, or None when nothing helps."""
        client_side = isinstance(exc, ValueError) and status is None  # the SDK refused before sending
        if (status == 400 or client_side) and "temperature" in message and self._drop("temperature"):
            return "the model rejects temperature"
        if status == 400 and "max_tokens" in message and "unsupported" in message and self._drop_max_tokens():
            return "the server rejects max_tokens beside max_completion_tokens"
        if (
            status == 400
            and self.provider == "openai"
            and self.method == "json_schema"
            and any(w in message for w in ("response_format", "json_schema", "invalid schema"))
        ):
            self.method = "json_mode"
            return "the server rejects json_schema output; asked for a JSON object instead"
        return None

    def _once(
        self,
        ledger: Ledger,
        messages: list[BaseMessage],
        schema: type[BaseModel],
        step: str,
        question_sink: TextSink | None = None,
    ) -> Reply:
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
        slot = self.slots.acquire(left - self.limits.min_call_s) if self.slots is not None else None
        left = self.remaining(ledger, step)  # the wait for a slot counts against the question, not the call
        ledger.calls += 1
        model = bound(self.chat, model_schema(schema), self.method, self.provider)
        sink = self.on_text
        written: list[str] = []

        def on_text(text: str) -> None:
            written.append(text)
            if sink is not None:
                sink(step, "".join(written))
            if question_sink is not None:
                question_sink("".join(written))

        try:
            raw = within(
                lambda cancel: stream(model, messages, cancel=cancel, on_text=on_text),
                min(left, self.limits.timeout_s + 1.0),
                done=slot.release if slot is not None else lambda: None,
            )
        except Exception as exc:
            if is_timeout(exc):
                ledger.timeouts += 1
            if type(exc).__name__ != "LengthFinishReasonError":  # the OpenAI SDK's word for a cut reply
                raise
            return self._cut(ledger, exc)
        reply = reply_of(raw)
        if raw.response_metadata.get("whitespace_loop"):
            ledger.notes.append(f"{step}: the reply looped on whitespace; stopped and read as cut")
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

    def _drop(self, field: str) -> bool:
        if getattr(self.chat, field, None) is None:
            return False
        self.chat = self.chat.model_copy(update={field: None})
        return True

    def _drop_max_tokens(self) -> bool:
        extra = dict(getattr(self.chat, "extra_body", None) or {})
        if "max_tokens" not in extra:
            return False
        extra.pop("max_tokens")
        self.chat = self.chat.model_copy(update={"extra_body": extra or None})
        return True

    def _roomier(self) -> bool:
        """For a reasoning model that spent its cap: twice the output cap (once) and low reasoning effort."""
        if not is_reasoning(self.provider, self.name):
            return False
        cap_field = "num_predict" if self.provider == "ollama" else "max_tokens"
        cap = getattr(self.chat, cap_field, None) or self.limits.max_output_tokens
        if cap >= min(MAX_REASONING_CAP, self.limits.max_output_tokens * 2):
            return False
        update: dict[str, Any] = {cap_field: min(MAX_REASONING_CAP, cap * 2)}
        if hasattr(self.chat, "reasoning_effort"):
            update["reasoning_effort"] = "low"
        extra = dict(getattr(self.chat, "extra_body", None) or {})
        if "max_tokens" in extra:
            update["extra_body"] = {**extra, "max_tokens": update[cap_field]}
        self.chat = self.chat.model_copy(update=update)
        return True

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        after = retry_after(exc) if exc else None
        if after is not None:
            return min(after, MAX_RETRY_AFTER_S)
        return min(self.limits.backoff_s * 2 ** (state.attempt_number - 1), self.limits.max_backoff_s)
