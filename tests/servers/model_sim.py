"""A local model simulator: one server on 127.0.0.1 speaking the three chat protocols Sleuth's LLM reasoner uses.

- OpenAI-compatible `POST /v1/chat/completions` (OpenAI, vLLM, llama.cpp): `response_format` (`json_schema`,
  `json_object`), `tools` with `tool_choice`, `max_tokens`/`max_completion_tokens`; replies with content or
  `tool_calls`, `finish_reason`, `usage`, `refusal`. Errors in OpenAI's shape (`context_length_exceeded`).
- Ollama `POST /api/chat`: `format` (a JSON schema or "json"), `options.num_ctx`/`num_predict`, streamed as
  NDJSON when `stream` is true (langchain-ollama's default), `done_reason`, `prompt_eval_count`/`eval_count`.
  Like Ollama, a prompt longer than the window (`num_ctx`, default 2048) is cut silently from the front.
- Anthropic `POST /v1/messages`: `system`, `tools` with a forced `tool_choice`, `max_tokens`; replies with
  `tool_use` or `text` blocks, `stop_reason` (`end_turn`, `tool_use`, `max_tokens`, `refusal`) and `usage`.

A brain (`respond`, a function of the request read as a `Turn`) or a queue (`push`) decides each reply, as a
`Say`: a dict sent the way the request asked (tool call when a tool was forced, content otherwise), or text;
with realistic faults: prose around the JSON, a ``` fence, a tool call where content was asked, a cut at the
output cap, a refusal, an HTTP error (429 + Retry-After, 5xx, a context-length error), a delay (held on an event
`close` releases), a whitespace loop until the cap. Every request is recorded as a `Turn`; a request with
nothing scripted gets a 500.

Streamed requests are answered in each protocol's streaming format (`model_wire`), paced by the server's
`Profile` (`LAPTOP`: one slot, a cold load, 21 tokens/s); a client that goes away mid-stream is counted in
`disconnects` (and `disconnected` is set), and generation stops there, as on a real server; `finished` records
when each streamed reply's last piece was sent (`time.monotonic`). `quirks` are
documented refusals and habits of real servers and models: `no-temperature` (a 400 for any temperature but
the default, reasoning models), `no-max-tokens` (a 400 for `max_tokens`, OpenAI's reasoning models),
`max-tokens-only` (older llama.cpp: reads only `max_tokens`), `type-arrays` (a 400 for a schema with
`"type": [..., "null"]`, which Anthropic's structured output refuses), `reasoning` (hidden reasoning spends
2,000 output tokens, 200 at low effort: below that the reply is empty with finish reason `length`).
`dialect` words a context-length error as `openai`, `llamacpp` or `vllm` do.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tests.servers import model_wire
from tests.servers.model_wire import INSTANT, Profile

Protocol = Literal["openai", "ollama", "anthropic"]
Dialect = Literal["openai", "llamacpp", "vllm"]
REASONING_TOKENS, LOW_EFFORT_REASONING_TOKENS = 2000, 200
OLLAMA_DEFAULT_CTX = 2048
CHARS_PER_TOKEN = 4


@dataclass
class Turn:
    """A request as the model sees it, whatever the protocol."""

    protocol: Protocol
    system: str
    user: str  # the last user message
    messages: list[dict[str, str]]  # role, content (system first when there is one)
    schema: dict[str, Any] | None  # the structured-output schema asked for, if any
    tool: str | None  # the tool the request forces, if any
    max_tokens: int | None
    body: dict[str, Any]
    truncated: bool = False  # the prompt was cut to the window (Ollama)

    @property
    def prompt_tokens(self) -> int:
        return sum(len(m["content"]) for m in self.messages) // CHARS_PER_TOKEN + 1


@dataclass
class Say:
    """One scripted reply."""

    content: str | dict[str, Any] = ""
    prose: bool = False  # "Sure! Here is the JSON you asked for: ... Let me know ..."
    fenced: bool = False  # ```json ... ```
    as_tool: bool | None = None  # None: a tool call exactly when the request forced one
    cut: bool = False  # stopped at the output cap: half the text, finish_reason=length
    refusal: str | None = None
    status: int = 200
    error: str = ""  # the error message for a status other than 200
    error_code: str | None = None  # OpenAI's `code` ("context_length_exceeded")
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens; estimated if None
    raw_body: str | None = None  # a broken HTTP payload
    whitespace: bool = False  # "{" and then whitespace until the output cap (a JSON-grammar loop)


Reply = Say | dict[str, Any] | str
Brain = Callable[[Turn], Reply]


def say(reply: Reply) -> Say:
    return reply if isinstance(reply, Say) else Say(content=reply)


def context_error(protocol: Protocol, window: int, asked: int, dialect: Dialect = "openai") -> Say:
    """The provider's own words for a prompt over the window."""
    if protocol == "anthropic":
        return Say(status=400, error=f"prompt is too long: {asked} tokens > {window} maximum")
    if dialect == "llamacpp":  # llama-server's `exceed_context_size_error`
        return Say(
            status=400,
            error="the request exceeds the available context size, try increasing it",
            error_code="exceed_context_size_error",
        )
    if dialect == "vllm":
        return Say(
            status=400, error=f"Input prompt ({asked} tokens) is too long and exceeds limit of {window}"
        )
    return Say(
        status=400,
        error=f"This model's maximum context length is {window} tokens. However, you requested {asked} "
        "tokens. Please reduce the length of the messages or completion.",
        error_code="context_length_exceeded",
    )


class ModelSimulator:
    def __init__(
        self,
        respond: Brain | None = None,
        *,
        window: int | None = None,
        port: int = 0,
        profile: Profile = INSTANT,
        quirks: frozenset[str] = frozenset(),
        dialect: Dialect = "openai",
    ) -> None:
        self.respond = respond
        self.window = window  # OpenAI/Anthropic: a prompt over it is a 400 (Ollama: see num_ctx)
        self.profile, self.quirks, self.dialect = profile, quirks, dialect
        self.disconnects = 0
        self.disconnected = threading.Event()
        self.tokens_written = 0
        self.in_flight = self.peak_in_flight = 0
        self._slots = threading.BoundedSemaphore(profile.slots) if profile.slots else None
        self._loaded = False
        self.turns: list[Turn] = []
        self.finished: list[tuple[Turn, float]] = []  # each streamed reply, when its last piece was sent
        self.unscripted = 0
        self.errors: list[str] = []  # exceptions raised by `respond` (answered with a 500)
        self._queue: deque[Say] = deque()
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def base_url(self, protocol: Protocol) -> str:
        """What `llm_base_url` is set to for each provider's client."""
        return f"{self.root}/v1" if protocol == "openai" else self.root

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(say(r) for r in replies)

    def start(self) -> ModelSimulator:
        self._thread.start()
        return self

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def decide(self, turn: Turn) -> Say | None:
        with self._lock:
            self.turns.append(turn)
            if self._queue:
                return self._queue.popleft()
        if self.respond is not None:
            try:
                return say(self.respond(turn))
            except Exception as exc:  # a broken script must fail the test, not hang the client
                self.errors.append(repr(exc))
                return Say(status=500, error="brain failed")
        self.unscripted += 1
        return None

    def wait(self, seconds: float) -> None:
        self._release.wait(seconds)

    def refuses(self, turn: Turn) -> Say | None:
        """The quirks' 400s, before anything is generated."""
        body = turn.body
        temperature = body.get("temperature")
        if "no-temperature" in self.quirks and temperature is not None and temperature != 1:
            return Say(
                status=400,
                error=f"Unsupported value: 'temperature' does not support {temperature} with this model. "
                "Only the default (1) value is supported.",
                error_code="unsupported_value",
            )
        if "no-max-tokens" in self.quirks and "max_tokens" in body and turn.protocol == "openai":
            return Say(
                status=400,
                error="Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                "'max_completion_tokens' instead.",
                error_code="unsupported_parameter",
            )
        if "type-arrays" in self.quirks and _type_arrays(turn.schema):
            return Say(status=400, error="Invalid schema: type arrays are not supported; use anyOf")
        return None

    def begin(self) -> None:
        """A request is being served: waits for a slot (like a single-slot server) and a cold load."""
        if self._slots is not None:
            self._slots.acquire()
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            cold, self._loaded = not self._loaded, True
        if cold and self.profile.cold_load_s:
            self.wait(self.profile.cold_load_s)

    def end(self) -> None:
        with self._lock:
            self.in_flight -= 1
        if self._slots is not None:
            self._slots.release()

    def gone(self) -> None:
        with self._lock:
            self.disconnects += 1
        self.disconnected.set()


def _type_arrays(node: Any) -> bool:
    if isinstance(node, dict):
        return isinstance(node.get("type"), list) or any(_type_arrays(v) for v in node.values())
    return isinstance(node, list) and any(_type_arrays(v) for v in node)


@contextmanager
def serve(
    respond: Brain | None = None,
    *,
    window: int | None = None,
    profile: Profile = INSTANT,
    quirks: frozenset[str] = frozenset(),
    dialect: Dialect = "openai",
) -> Iterator[ModelSimulator]:
    server = ModelSimulator(respond, window=window, profile=profile, quirks=quirks, dialect=dialect).start()
    try:
        yield server
    finally:
        server.close()


# ---------------------------------------------------------------------- reading requests
def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def read_openai(body: dict[str, Any]) -> Turn:
    messages = [{"role": m["role"], "content": _text(m.get("content"))} for m in body.get("messages", [])]
    fmt = body.get("response_format") or {}
    schema = fmt.get("json_schema", {}).get("schema") if fmt.get("type") == "json_schema" else None
    choice = body.get("tool_choice")
    tool = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    if tool:
        schema = next(
            (t["function"].get("parameters") for t in body.get("tools", []) if t["function"]["name"] == tool),
            None,
        )
    return _turn(
        "openai", messages, schema, tool, body.get("max_completion_tokens") or body.get("max_tokens"), body
    )


def read_ollama(body: dict[str, Any], window: int) -> Turn:
    messages = [{"role": m["role"], "content": _text(m.get("content"))} for m in body.get("messages", [])]
    fmt = body.get("format")
    options = body.get("options") or {}
    turn = _turn(
        "ollama", messages, fmt if isinstance(fmt, dict) else None, None, options.get("num_predict"), body
    )
    over = turn.prompt_tokens - window
    if over > 0:  # Ollama keeps the end of the prompt and drops the start, without a word
        cut, kept = over * CHARS_PER_TOKEN, []
        for m in messages:
            take = min(cut, len(m["content"]))
            cut -= take
            if len(m["content"]) > take:
                kept.append({**m, "content": m["content"][take:]})
        turn = _turn("ollama", kept, turn.schema, None, turn.max_tokens, body)
        turn.truncated = True
    return turn


def read_anthropic(body: dict[str, Any]) -> Turn:
    system = _text(body.get("system"))
    messages = [{"role": "system", "content": system}] if system else []
    messages += [{"role": m["role"], "content": _text(m.get("content"))} for m in body.get("messages", [])]
    choice = body.get("tool_choice") or {}
    tool = choice.get("name") if choice.get("type") == "tool" else None
    schema = next((t.get("input_schema") for t in body.get("tools", []) if t.get("name") == tool), None)
    fmt = (body.get("output_config") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":  # structured output without a tool: the reply is the JSON text
        schema = fmt.get("schema")
    return _turn("anthropic", messages, schema, tool, body.get("max_tokens"), body)


def _turn(
    protocol: Protocol,
    messages: list[dict[str, str]],
    schema: dict[str, Any] | None,
    tool: str | None,
    max_tokens: int | None,
    body: dict[str, Any],
) -> Turn:
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    return Turn(protocol, system, user, messages, schema, tool, max_tokens, body)


# ---------------------------------------------------------------------- writing replies
def _rendered(s: Say) -> str:
    text = s.content if isinstance(s.content, str) else json.dumps(s.content)
    if s.fenced:
        text = f"```json\n{text}\n```"
    if s.prose:
        text = f"Sure! Here is the JSON you asked for:\n{text}\nLet me know if you need anything else."
    return text


def _usage(turn: Turn, s: Say, text: str) -> tuple[int, int]:
    return s.usage or (turn.prompt_tokens, max(1, len(text) // CHARS_PER_TOKEN))


def openai_reply(turn: Turn, s: Say) -> dict[str, Any]:
    as_tool = s.as_tool if s.as_tool is not None else turn.tool is not None
    text = _rendered(s)
    message: dict[str, Any] = {"role": "assistant", "content": None if as_tool else text}
    finish = "length" if s.cut else "stop"
    if as_tool:
        args = text if isinstance(s.content, str) else json.dumps(s.content)
        name = turn.tool or (turn.schema or {}).get("title", "reply")
        message["tool_calls"] = [
            {"id": "call_sim", "type": "function", "function": {"name": name, "arguments": args}}
        ]
        finish = "tool_calls" if not s.cut else finish
    if s.cut:
        message["content"] = text[: len(text) // 2] if not as_tool else None
    if s.refusal:
        message = {"role": "assistant", "content": None, "refusal": s.refusal}
    prompt, done = _usage(turn, s, text)
    return {
        "id": "chatcmpl-sim",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": turn.body.get("model", "sim"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done},
    }


def ollama_chunks(turn: Turn, s: Say) -> list[dict[str, Any]]:
    text = _rendered(s)
    message: dict[str, Any] = {"role": "assistant", "content": text[: len(text) // 2] if s.cut else text}
    if s.as_tool:
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "reply", "arguments": s.content if isinstance(s.content, dict) else {}}}
            ],
        }
    prompt, done = _usage(turn, s, text)
    stamp = {"model": turn.body.get("model", "sim"), "created_at": "2026-01-01T00:00:00Z"}
    last = {
        **stamp,
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": "length" if s.cut else "stop",
        "total_duration": 1,
        "prompt_eval_count": prompt,
        "eval_count": done,
    }
    return [{**stamp, "message": message, "done": False}, last]


def anthropic_reply(turn: Turn, s: Say) -> dict[str, Any]:
    as_tool = s.as_tool if s.as_tool is not None else turn.tool is not None
    text = _rendered(s)
    if s.refusal:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": s.refusal}]
        stop = "refusal"
    elif as_tool and not s.cut:
        data = s.content if isinstance(s.content, dict) else {}
        blocks = [{"type": "tool_use", "id": "toolu_sim", "name": turn.tool or "reply", "input": data}]
        stop = "tool_use"
    else:
        blocks = [{"type": "text", "text": text[: len(text) // 2] if s.cut else text}]
        stop = "max_tokens" if s.cut else "end_turn"
    prompt, done = _usage(turn, s, text)
    return {
        "id": "msg_sim",
        "type": "message",
        "role": "assistant",
        "model": turn.body.get("model", "sim"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": done},
    }


def _error_body(protocol: Protocol, s: Say) -> dict[str, Any]:
    message = s.error or f"simulated error {s.status}"
    if protocol == "anthropic":
        kind = (
            "rate_limit_error"
            if s.status == 429
            else "invalid_request_error"
            if s.status < 500
            else "api_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}
    if protocol == "ollama":
        return {"error": message}
    kind = "invalid_request_error" if s.status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": s.error_code}}


def _effort(turn: Turn) -> str | None:
    body = turn.body
    if turn.protocol == "anthropic":
        return (body.get("output_config") or {}).get("effort")
    return body.get("reasoning_effort") or (body.get("reasoning") or {}).get("effort")


def _events(sim: ModelSimulator, turn: Turn, s: Say) -> list[bytes]:
    """The streamed reply for `s`: content or tool arguments, cut, looping or spent on reasoning."""
    as_tool = turn.protocol != "ollama" and (s.as_tool if s.as_tool is not None else turn.tool is not None)
    tool = (turn.tool or (turn.schema or {}).get("title", "reply")) if as_tool else None
    text = s.refusal or _rendered(s)
    if as_tool and not isinstance(s.content, dict) and turn.protocol == "anthropic":
        text = "{}"
    cap = int(turn.max_tokens or 4096)
    truncated, details = s.cut, None
    if s.cut:
        text = text[: len(text) // 2]
    if s.whitespace:
        text, truncated = "{" + " \n" * (cap * CHARS_PER_TOKEN // 2), True
    spent = 0
    if "reasoning" in sim.quirks:
        spent = LOW_EFFORT_REASONING_TOKENS if _effort(turn) in {"low", "minimal"} else REASONING_TOKENS
        if cap <= spent:
            text, truncated, spent = "", True, cap
        details = {"reasoning_tokens": spent}
    prompt, done = s.usage or (turn.prompt_tokens, max(1, len(text) // CHARS_PER_TOKEN))
    usage = (prompt, done + spent)
    parts = model_wire.pieces(text, sim.profile)
    model = str(turn.body.get("model", "sim"))
    if turn.protocol == "anthropic":
        stop = "refusal" if s.refusal else "max_tokens" if truncated else "tool_use" if tool else "end_turn"
        return list(model_wire.anthropic_events(model, parts, tool=tool, stop=stop, usage=usage))
    if turn.protocol == "ollama":
        return list(
            model_wire.ollama_lines(model, parts, finish="length" if truncated else "stop", usage=usage)
        )
    finish = "length" if truncated else "tool_calls" if tool else "stop"
    wants_usage = bool((turn.body.get("stream_options") or {}).get("include_usage"))
    return list(
        model_wire.openai_events(
            model, parts, tool=tool, refusal=bool(s.refusal), finish=finish,
            usage=usage if wants_usage else None, details=details,
        )
    )  # fmt: skip


def _handler(sim: ModelSimulator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw or b"{}")
            path = self.path.split("?")[0].rstrip("/")
            if path == "/v1/chat/completions":
                turn = read_openai(body)
            elif path == "/api/chat":
                window = int((body.get("options") or {}).get("num_ctx") or OLLAMA_DEFAULT_CTX)
                turn = read_ollama(body, window)
            elif path == "/v1/messages":
                turn = read_anthropic(body)
            else:
                self._send(404, {"error": {"message": "not found"}})
                return
            if "max-tokens-only" in sim.quirks and turn.protocol == "openai":
                turn.max_tokens = body.get("max_tokens")  # an older llama.cpp: max_completion_tokens unread
            asked = turn.prompt_tokens + int(turn.max_tokens or 0)
            s: Say | None
            if sim.window is not None and turn.protocol != "ollama" and asked > sim.window:
                s = context_error(turn.protocol, sim.window, asked, sim.dialect)
            else:
                s = sim.refuses(turn)
            if s is not None:
                with sim._lock:
                    sim.turns.append(turn)
            else:
                s = sim.decide(turn)
            if s is None:
                self._send(500, _error_body(turn.protocol, Say(status=500, error="nothing scripted")))
                return
            if s.delay_s:
                sim.wait(s.delay_s)
            if s.status != 200:
                self._send(s.status, _error_body(turn.protocol, s), s.headers)
            elif s.raw_body is not None:
                self._send_raw(200, s.raw_body.encode(), {"Content-Type": "application/json"})
            elif body.get("stream", turn.protocol == "ollama") and not (
                turn.protocol == "ollama" and s.as_tool
            ):
                self._stream(turn, s)
            elif turn.protocol == "openai":
                self._send(200, openai_reply(turn, s), s.headers)
            elif turn.protocol == "anthropic":
                self._send(200, anthropic_reply(turn, s), s.headers)
            elif body.get("stream", True):
                lines = "".join(json.dumps(c) + "\n" for c in ollama_chunks(turn, s))
                self._send_raw(200, lines.encode(), {"Content-Type": "application/x-ndjson", **s.headers})
            else:
                first, last = ollama_chunks(turn, s)
                self._send(200, {**last, "message": first["message"]}, s.headers)

        def _stream(self, turn: Turn, s: Say) -> None:
            """The reply in the protocol's streaming format, one piece at a time at the profile's speed; a
            client that goes away ends the generation."""
            events = _events(sim, turn, s)
            kind = "text/event-stream" if turn.protocol != "ollama" else "application/x-ndjson"
            sim.begin()
            try:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Transfer-Encoding", "chunked")
                for key, value in s.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                sim.wait(sim.profile.prompt_s(turn.prompt_tokens))
                for event in events:
                    self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                    self.wfile.flush()
                    with sim._lock:
                        sim.tokens_written += sim.profile.chunk_tokens
                    sim.wait(sim.profile.piece_s())
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                with sim._lock:
                    sim.finished.append((turn, time.monotonic()))
            except (BrokenPipeError, ConnectionResetError):
                sim.gone()
                self.close_connection = True
            finally:
                sim.end()

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._send_raw(
                status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})}
            )

        def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a deadline test)

    return Handler
