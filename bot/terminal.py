"""An answer rendered for a terminal (the CLI and the demo): the same parts as the Slack message."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text


def render_answer(out: dict[str, Any], *, show_trace: bool = False) -> Panel:
    answer = out.get("answer") or {}
    parts: list[Any] = [Text(answer.get("text", ""))]
    for conflict in answer.get("conflicts", []):
        sides = "; ".join(
            f"[{s['n']}] {s['title']} (updated {s['updated_at']}, v{s['version']}"
            f"{', replaced' if s.get('outdated') else ''}): {s['value']}"
            for s in conflict["sides"]
        )
        parts.append(
            Text.from_markup(
                f"[yellow]Sources disagree[/] — {escape(sides)}. The current one is listed first."
            )
        )
    if answer.get("sources"):
        parts.append(Text.from_markup("\n[bold]Sources[/]"))
        for s in answer["sources"]:
            parts.append(
                Text.from_markup(
                    f"[{s['n']}] [link={escape(s['url'])}]{escape(s['title'])}[/link] · {s['kind']} · "
                    f"{escape(s['source'])} · updated {s['updated_at']}"
                )
            )
    if answer.get("gaps"):
        parts.append(Text.from_markup("\n[bold]Open gaps[/]"))
        for g in answer["gaps"]:
            clues = "".join(f"[{n}]" for n in g.get("clue_numbers", []))
            parts.append(Text(f"• {g['what']} {clues}".rstrip()))
    parts.append(
        Text.from_markup(
            f"\n[dim]confidence {answer.get('confidence', 0):.0%} · {answer.get('rounds', 0)} round(s) · "
            f"{answer.get('path', '')} path · stop: {answer.get('stop_reason')}[/]"
        )
    )
    if show_trace:
        parts.append(Text.from_markup("\n[bold]Trace[/]"))
        for step in out.get("trace") or []:
            parts.append(Text(_trace_line(step)))
            for note in step.get("notes") or []:
                parts.append(Text(f"    note: {note}", style="dim"))
    return Panel(Group(*parts), title=escape(out.get("question", "")), title_align="left")


def _trace_line(step: dict[str, Any]) -> str:
    node = step.get("node")
    if node == "plan":
        route = f" route={step['route']} ({step.get('route_why', '')})" if "route" in step else ""
        return (
            f"plan: aspects={step['aspects']} entities={step['entities']} type={step['answer_type']}{route}"
        )
    if node == "retrieve":
        return (
            f"round {step['round']} retrieve ({step['direction']}): queries={step['queries']} seeds={step['seeds']} "
            f"skimmed={step['skimmed']} read={len(step['read'])} {step['reading']}"
        )
    if node == "reflect":
        return (
            f"round {step['round']} reflect: established={step['established']} missing={len(step['missing'])} "
            f"seeds={step['seeds']} next={step['next']} stop={step['stop']} rejected={len(step['rejected'])}"
        )
    return f"answer: cited={step.get('cited')} conflicts={step.get('conflicts')} confidence={step.get('confidence')}"
