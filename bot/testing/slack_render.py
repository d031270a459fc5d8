"""Print a Slack message roughly as a Slack client shows it, for the terminal demo and test failure output."""

from __future__ import annotations

import re
from typing import Any

_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before ASCII punctuation


def markdown_shown(text: str) -> str:
    """A markdown block's text as Slack shows it, as far as these messages need: backslash escapes resolved."""
    return _MARKDOWN_ESCAPE.sub(r"\1", text)


def _text(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("text", ""))
    return "" if obj is None else str(obj)


def _element(element: dict[str, Any]) -> str:
    kind = element.get("type")
    if kind == "button":
        return f"[{_text(element.get('text'))}]"
    if kind == "feedback_buttons":
        positive = _text(element.get("positive_button", {}).get("text")) or "Good"
        negative = _text(element.get("negative_button", {}).get("text")) or "Bad"
        return f"[👍 {positive}] [👎 {negative}]"
    if kind == "icon_button":
        return f"[{_text(element.get('text')) or element.get('icon', '')}]"
    if kind == "image":
        return f"<image: {element.get('alt_text', '')}>"
    if kind in ("static_select", "users_select", "conversations_select", "overflow"):
        return f"[{_text(element.get('placeholder')) or kind} ▾]"
    return _text(element)


def _rich_text(block: dict[str, Any]) -> str:
    parts: list[str] = []
    for section in block.get("elements", []):
        for item in section.get("elements", []):
            kind = item.get("type")
            if kind == "user":
                parts.append(f"<@{item.get('user_id', '')}>")
            elif kind == "link":
                parts.append(item.get("text") or item.get("url", ""))
            else:
                parts.append(str(item.get("text", "")))
    return "".join(parts)


def _block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "section":
        lines = [_text(block.get("text"))] if block.get("text") else []
        lines += [_text(f) for f in block.get("fields", [])]
        accessory = block.get("accessory")
        if isinstance(accessory, dict) and accessory.get("type") != "image":
            lines.append(_element(accessory))
        return "\n".join(line for line in lines if line)
    if kind == "header":
        return f"== {_text(block.get('text'))} =="
    if kind == "markdown":
        return markdown_shown(_text(block))
    if kind == "divider":
        return "-" * 40
    if kind == "context":
        return "  ".join(_element(e) for e in block.get("elements", []))
    if kind in ("actions", "context_actions"):
        return " ".join(_element(e) for e in block.get("elements", []))
    if kind == "rich_text":
        return _rich_text(block)
    if kind == "image":
        return f"<image: {block.get('alt_text', '')}>"
    return ""


def format_message(message: dict[str, Any]) -> str:
    """Visible text of a message: its blocks when it has any (as Slack shows them), else its text."""
    blocks = message.get("blocks") or []
    rendered = [text for text in (_block(b) for b in blocks if isinstance(b, dict)) if text]
    body = "\n".join(rendered) if rendered else str(message.get("text", ""))
    reactions = " ".join(f":{r['name']}: {r.get('count', 1)}" for r in message.get("reactions", []))
    return f"{body}\n{reactions}" if reactions else body
