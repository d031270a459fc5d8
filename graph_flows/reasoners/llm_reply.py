"""Reading a model's reply, whatever the provider: the text or the tool call, whether it was cut at the output
cap or refused, and the first complete JSON object in it read leniently as the step's shape. Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.messages import AIMessage
from pydantic import BaseModel, ValidationError

from graph_flows.reasoners.base import BadModelOutput

T = TypeVar("T", bound=BaseModel)
_TRUNCATED = {"length", "max_tokens"}  # OpenAI and Ollama, Anthropic


@dataclass
class Reply:
    """One model reply, whatever the provider: the text or tool arguments, and why it ended."""

    text: str
    args: dict[str, Any] | None = None  # the first tool call's arguments, when the model called one
    truncated: bool = False  # cut at the output cap (finish_reason=length, stop_reason=max_tokens)
    refusal: str | None = None


def reply_of(raw: AIMessage) -> Reply:
    meta = raw.response_metadata or {}
    finish = meta.get("finish_reason") or meta.get("done_reason") or meta.get("stop_reason")
    refusal = raw.additional_kwargs.get("refusal") or ("refused" if finish == "refusal" else None)
    args = raw.tool_calls[0]["args"] if raw.tool_calls else None
    return Reply(text=raw.text, args=args, truncated=finish in _TRUNCATED, refusal=refusal)


def parse_reply(reply: Reply | str, schema: type[T]) -> T:
    """The reply as `schema`, or BadModelOutput with a short reason (sent back to the model to repair).

    Read leniently: a tool call's arguments, or the first complete JSON object in the text (fences and
    prose around it ignored); then the lenient schema (extra keys ignored, nulls as defaults, lists cut)."""
    if isinstance(reply, str):
        reply = Reply(text=reply)
    if reply.refusal is not None:
        raise BadModelOutput(f"the model refused: {reply.refusal[:120]}")
    data = reply.args if reply.args else first_json_object(reply.text, set(schema.model_fields))
    if data is None:
        hint = " (cut at the output cap)" if reply.truncated else ""
        raise BadModelOutput(f"not valid JSON: no complete JSON object in the reply{hint}")
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in errors[:5]]
        raise BadModelOutput("; ".join(parts)) from exc


def first_json_object(text: str, keys: set[str] | None = None) -> dict[str, Any] | None:
    """The first complete JSON object in `text` with one of `keys`, wherever it starts (after prose, inside
    a fence). The keys keep an inner object of a reply cut short from passing for the reply."""
    decoder = json.JSONDecoder()
    at = text.find("{")
    while at >= 0:
        try:
            value, _ = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict) and (keys is None or keys & value.keys()):
            return value
        at = text.find("{", at + 1)
    return None
