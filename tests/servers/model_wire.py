"""How the model simulator streams: each protocol's streaming format, paced at a server profile's speed.

- OpenAI (and vLLM, llama.cpp, LM Studio): server-sent events of `chat.completion.chunk`s, content or
  `tool_calls` deltas (a refusal as `refusal` deltas), the `finish_reason` on the last choice, a usage chunk
  when `stream_options.include_usage` asks for one, then `data: [DONE]`.
- Anthropic: `message_start`, one `content_block_*` group (`text_delta` or `input_json_delta`), `message_delta`
  with `stop_reason` and usage, `message_stop`.
- Ollama: NDJSON lines of `message.content` pieces, then the `done` line with its counts.

A `Profile` is the server's speed and parallelism: prompt tokens/s read before the first token, reply
tokens/s, a cold load on the first request, and its slots (Ollama's `OLLAMA_NUM_PARALLEL`, default 1): a
request waits for a free slot, as on the real server. `LAPTOP` is a 7B model on an M4 at published speeds.
`scaled(k)` runs it k times faster, with every other number of a test scaled alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Profile:
    name: str = "instant"
    prompt_tps: float | None = None  # None: the prompt is read at once
    generate_tps: float | None = None  # None: the reply is written at once
    slots: int | None = None  # None: any number of requests at once
    cold_load_s: float = 0.0  # the first request also loads the model
    chunk_tokens: int = 4  # tokens per streamed piece

    def scaled(self, k: float) -> Profile:
        """The same server k times faster (a test's other numbers are divided by k too)."""
        return replace(
            self,
            prompt_tps=self.prompt_tps * k if self.prompt_tps else None,
            generate_tps=self.generate_tps * k if self.generate_tps else None,
            cold_load_s=self.cold_load_s / k,
        )

    def prompt_s(self, tokens: int) -> float:
        return tokens / self.prompt_tps if self.prompt_tps else 0.0

    def piece_s(self) -> float:
        return self.chunk_tokens / self.generate_tps if self.generate_tps else 0.0


INSTANT = Profile()
LAPTOP = Profile("laptop", prompt_tps=300.0, generate_tps=21.0, slots=1, cold_load_s=4.0)  # 7B q4, M4
CPU_ONLY = Profile("cpu", prompt_tps=60.0, generate_tps=8.0, slots=1, cold_load_s=10.0)


def pieces(text: str, profile: Profile) -> list[str]:
    size = max(1, profile.chunk_tokens * CHARS_PER_TOKEN)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _sse(data: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def openai_events(
    model: str,
    parts: list[str],
    *,
    tool: str | None,
    refusal: bool,
    finish: str,
    usage: tuple[int, int] | None,
    details: dict[str, Any] | None = None,
) -> Iterator[bytes]:
    """The SSE stream of one reply; `parts` are the content (or tool arguments, or refusal) pieces."""
    base = {"id": "chatcmpl-sim", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return _sse({**base, "choices": [choice]})

    yield chunk({"role": "assistant", "content": "" if tool is None and not refusal else None})
    for i, part in enumerate(parts):
        if refusal:
            yield chunk({"refusal": part})
        elif tool is not None:
            call: dict[str, Any] = {"index": 0, "function": {"arguments": part}}
            if i == 0:
                call = {
                    **call,
                    "id": "call_sim",
                    "type": "function",
                    "function": {"name": tool, "arguments": part},
                }
            yield chunk({"tool_calls": [call]})
        elif part:
            yield chunk({"content": part})
    yield chunk({}, finish)
    if usage is not None:
        prompt, done = usage
        extra = {"completion_tokens_details": details} if details else {}
        totals = {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done, **extra}
        yield _sse({**base, "choices": [], "usage": totals})
    yield b"data: [DONE]\n\n"


def anthropic_events(
    model: str, parts: list[str], *, tool: str | None, stop: str, usage: tuple[int, int]
) -> Iterator[bytes]:
    prompt, done = usage
    message = {"id": "msg_sim", "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": prompt, "output_tokens": 1}}  # fmt: skip
    yield _sse({"type": "message_start", "message": message}, "message_start")
    block = (
        {"type": "tool_use", "id": "toolu_sim", "name": tool, "input": {}}
        if tool
        else {"type": "text", "text": ""}
    )
    yield _sse({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start")
    for part in parts:
        delta = (
            {"type": "input_json_delta", "partial_json": part}
            if tool
            else {"type": "text_delta", "text": part}
        )
        yield _sse({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta")
    yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    yield _sse(
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
         "usage": {"output_tokens": done}},
        "message_delta",
    )  # fmt: skip
    yield _sse({"type": "message_stop"}, "message_stop")


def ollama_lines(model: str, parts: list[str], *, finish: str, usage: tuple[int, int]) -> Iterator[bytes]:
    stamp = {"model": model, "created_at": "2026-01-01T00:00:00Z"}
    for part in parts:
        line = {**stamp, "message": {"role": "assistant", "content": part}, "done": False}
        yield (json.dumps(line) + "\n").encode()
    prompt, done = usage
    last = {**stamp, "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": finish,
            "total_duration": 1, "prompt_eval_count": prompt, "eval_count": done}  # fmt: skip
    yield (json.dumps(last) + "\n").encode()
