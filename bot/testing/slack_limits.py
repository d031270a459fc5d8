"""Slack's message and Block Kit limits, enforced by the emulator the way Slack's API enforces them.

Sleuth renders long, cited answers; these checks make a too-long section or a 51st block fail in tests with
the same `invalid_blocks` error Slack returns, instead of passing locally and failing in a real workspace.
"""

from __future__ import annotations

from typing import Any

MAX_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
MAX_MESSAGE_TEXT_CHARS = 40_000
MAX_SECTION_TEXT_CHARS = 3_000
MAX_SECTION_FIELDS = 10
MAX_FIELD_TEXT_CHARS = 2_000
MAX_MARKDOWN_BLOCK_CHARS = 12_000
MAX_MARKDOWN_TEXT_CHARS = 12_000
MAX_HEADER_TEXT_CHARS = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_CONTEXT_ACTIONS_ELEMENTS = 5
MAX_BUTTON_TEXT_CHARS = 75
MAX_BUTTON_VALUE_CHARS = 2_000
# Not documented as one number; observed near 12-13k of block text in total (SLACK_NOTES.md "Limits").
MAX_BLOCKS_TEXT_CHARS = 13_000


class ApiError(Exception):
    """A Web API failure: `error` is Slack's error code, `extra` goes into the response body beside it."""

    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra


def _text_of(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("text", ""))
    return "" if obj is None else str(obj)


def _block_problems(index: int, block: Any, seen_ids: set[str]) -> list[str]:
    where = f"/blocks/{index}"
    if not isinstance(block, dict) or "type" not in block:
        return [f"missing required field: type [json-pointer:{where}]"]
    problems: list[str] = []
    block_id = block.get("block_id")
    if block_id is not None:
        if block_id in seen_ids:
            problems.append(f"block_id must be unique [json-pointer:{where}/block_id]")
        seen_ids.add(block_id)
    kind = block["type"]
    if kind == "section":
        text = _text_of(block.get("text"))
        fields = block.get("fields") or []
        if len(text) > MAX_SECTION_TEXT_CHARS:
            problems.append(f"must be less than 3001 characters [json-pointer:{where}/text/text]")
        if "text" not in block and not fields:
            problems.append(f"must provide either text or fields [json-pointer:{where}]")
        if len(fields) > MAX_SECTION_FIELDS:
            problems.append(f"must provide an array of no more than 10 items [json-pointer:{where}/fields]")
        for j, item in enumerate(fields):
            if len(_text_of(item)) > MAX_FIELD_TEXT_CHARS:
                problems.append(f"must be less than 2001 characters [json-pointer:{where}/fields/{j}/text]")
    elif kind == "markdown":
        if len(_text_of(block)) > MAX_MARKDOWN_BLOCK_CHARS:
            problems.append(f"must be less than 12001 characters [json-pointer:{where}/text]")
    elif kind == "header":
        if len(_text_of(block.get("text"))) > MAX_HEADER_TEXT_CHARS:
            problems.append(f"must be less than 151 characters [json-pointer:{where}/text/text]")
    elif kind in ("context", "actions", "context_actions"):
        limit = {
            "context": MAX_CONTEXT_ELEMENTS,
            "actions": MAX_ACTIONS_ELEMENTS,
            "context_actions": MAX_CONTEXT_ACTIONS_ELEMENTS,
        }[kind]
        elements = block.get("elements") or []
        if not elements:
            problems.append(f"must provide at least 1 item [json-pointer:{where}/elements]")
        if len(elements) > limit:
            problems.append(
                f"must provide an array of no more than {limit} items [json-pointer:{where}/elements]"
            )
        for j, element in enumerate(elements):
            if isinstance(element, dict) and element.get("type") == "button":
                if len(_text_of(element.get("text"))) > MAX_BUTTON_TEXT_CHARS:
                    problems.append(
                        f"must be less than 76 characters [json-pointer:{where}/elements/{j}/text]"
                    )
                if len(str(element.get("value", ""))) > MAX_BUTTON_VALUE_CHARS:
                    problems.append(
                        f"must be less than 2001 characters [json-pointer:{where}/elements/{j}/value]"
                    )
    return problems


def blocks_text_length(blocks: list[dict[str, Any]]) -> int:
    """Characters of visible text across blocks, the quantity behind `msg_blocks_too_long`."""
    total = 0
    for block in blocks:
        total += len(_text_of(block.get("text"))) if block.get("type") != "markdown" else len(_text_of(block))
        total += sum(len(_text_of(f)) for f in block.get("fields") or [])
    return total


def validate_blocks(blocks: Any, *, max_blocks: int = MAX_BLOCKS) -> list[dict[str, Any]]:
    """Raise `invalid_blocks` (with Slack's `errors` list) unless `blocks` is within Slack's limits."""
    if not isinstance(blocks, list):
        raise ApiError("invalid_blocks_format")
    problems: list[str] = []
    if len(blocks) > max_blocks:
        problems.append(f"must provide an array of no more than {max_blocks} items [json-pointer:/blocks]")
    seen_ids: set[str] = set()
    for i, block in enumerate(blocks):
        problems.extend(_block_problems(i, block, seen_ids))
    if problems:
        raise ApiError(
            "invalid_blocks",
            errors=problems,
            response_metadata={"messages": [f"[ERROR] {p}" for p in problems]},
        )
    if max_blocks == MAX_BLOCKS and blocks_text_length(blocks) > MAX_BLOCKS_TEXT_CHARS:
        raise ApiError("msg_blocks_too_long")
    return blocks
