"""One model request, streamed: the provider's structured-output binding, the reply gathered as it arrives, and
a request given up on closed, so the server stops generating for nobody.

The binding is LangChain's own (`with_structured_output`), but the reply is streamed and read by
`llm_reply`: OpenAI's `response_format` travels in `extra_body`, so the SDK streams plain chunks instead of
parsing the JSON itself. Streaming is what makes a call cancellable: the request runs in its own thread, and
when the caller stops waiting (the call's time or the question's deadline is up), the stream is closed at the
next chunk, which closes the connection (Ollama and llama.cpp stop generating when the client goes away).
A reply that has become only whitespace for `WHITESPACE_RUN` characters (a JSON-grammar loop of small local
models) is stopped the same way and read as cut at the output cap.

The model's own sampling rules are applied before the call (`sampling`): the newest Claude models take no
`temperature` (langchain-anthropic raises before sending one) and OpenAI's reasoning models take only the
default; those get `reasoning_effort` instead, when configured.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, BaseMessageChunk
from langchain_core.messages import message_chunk_to_message as _to_message

WHITESPACE_RUN = 256
_NO_TEMPERATURE_CLAUDE = ("claude-fable-5", "claude-sonnet-5-5", "claude-opus-5")
_REASONING_OPENAI = re.compile(r"^(?:o\d|gpt-5(?!-chat))", re.I)
TextSink = Callable[[str], None]


def takes_temperature(provider: str, name: str) -> bool:
    """False for models whose API refuses a non-default temperature."""
    if provider == "anthropic":
        return not name.startswith(_NO_TEMPERATURE_CLAUDE)
    return not (provider == "openai" and is_reasoning(provider, name))


def is_reasoning(provider: str, name: str) -> bool:
    """Models that spend output tokens on hidden reasoning before they write (gpt-5*, o-series, new Claude)."""
    if provider == "openai":
        return bool(_REASONING_OPENAI.match(name))
    return provider == "anthropic" and name.startswith(_NO_TEMPERATURE_CLAUDE)


def bound(chat: BaseChatModel, schema: dict[str, Any], method: str, provider: str) -> Any:
    """The chat model bound to the step's schema, as LangChain binds it for `method`, ready to stream."""
    strict = {"strict": True} if provider == "openai" and method == "json_schema" else {}
    runnable = chat.with_structured_output(schema, method=method, include_raw=True, **strict)  # type: ignore[arg-type]
    first = getattr(runnable, "first", None)
    raw = getattr(first, "steps__", {}).get("raw") if first is not None else None
    kwargs = getattr(raw, "kwargs", None)
    if raw is None or kwargs is None:
        return runnable  # a model that binds nothing (a test double): it streams itself
    kwargs = {k: v for k, v in kwargs.items() if k != "ls_structured_output_format"}
    if "response_format" in kwargs:
        extra = {
            **(getattr(chat, "extra_body", None) or {}),
            "response_format": kwargs.pop("response_format"),
        }
        kwargs["extra_body"] = extra
    return raw.bound.bind(**kwargs)


def stream(
    model: Any, messages: list[BaseMessage], *, cancel: threading.Event, on_text: TextSink | None = None
) -> AIMessage:
    """The whole reply; stops (closing the request) once `cancel` is set or the reply loops on whitespace."""
    total: BaseMessageChunk | None = None
    run = 0
    with contextlib.closing(_chunks(model, messages)) as chunks:
        for chunk in chunks:
            total = chunk if total is None else total + chunk  # type: ignore[operator]
            text = chunk.text if isinstance(chunk.text, str) else ""
            if on_text is not None and text:
                on_text(text)
            if text:
                run = run + len(text) if not text.strip() else len(text) - len(text.rstrip())
            if cancel.is_set():
                raise TimeoutError("the call was given up on")
            if run >= WHITESPACE_RUN:
                message = _message(total)
                meta = {**message.response_metadata, "finish_reason": "length", "whitespace_loop": True}
                return message.model_copy(update={"response_metadata": meta})
    return _message(total)


def _message(total: BaseMessageChunk | None) -> AIMessage:
    message = _to_message(total) if total is not None else AIMessage("")
    return message if isinstance(message, AIMessage) else AIMessage(content=message.content)


def _chunks(model: Any, messages: list[BaseMessage]) -> Iterator[BaseMessageChunk]:
    out = model.stream(messages)
    for item in out:
        if isinstance(item, dict) and "raw" in item:  # `with_structured_output(include_raw=True)` streamed
            item = item["raw"]
        if isinstance(item, AIMessage) and not isinstance(item, AIMessageChunk):
            item = AIMessageChunk(
                content=item.content,
                response_metadata=item.response_metadata,
                usage_metadata=item.usage_metadata,
                tool_call_chunks=[
                    {"name": c["name"], "args": _json(c["args"]), "id": c.get("id"), "index": i}
                    for i, c in enumerate(item.tool_calls)
                ],
            )
        if isinstance(item, BaseMessageChunk):
            yield item


def _json(args: Any) -> str:
    return json.dumps(args)


def within(call: Callable[[threading.Event], Any], seconds: float, *, done: Callable[[], None]) -> Any:
    """Runs `call(cancel)` in its own thread for at most `seconds`; past that, sets `cancel` (the stream
    closes at its next chunk) and raises TimeoutError. `done` runs in that thread when the request has ended,
    whenever that is (the model slot it held is then free)."""
    box: dict[str, Any] = {}
    cancel = threading.Event()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            box["out"] = context.run(call, cancel)
        except BaseException as exc:  # handed to the caller's thread as is
            box["error"] = exc
        finally:
            done()

    thread = threading.Thread(target=run, name="sleuth-llm-call", daemon=True)
    thread.start()
    thread.join(max(0.0, seconds))
    if thread.is_alive():
        cancel.set()
        raise TimeoutError(f"no reply within {seconds:.1f}s")
    if "error" in box:
        raise box["error"]
    return box["out"]
