"""Bench output: a rich table for the terminal, and JSON + Markdown files stamped with the git revision."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from evals import REPO_ROOT
from evals.runner import Advance, Record, Tracker

PIPE_WIDTH = 132
COLUMNS = (
    "set",
    "mode",
    "n",
    "R@2",
    "R@5",
    "AR@5",
    "ans∈ev",
    "ans∈ans",
    "cited R",
    "declined",
    "rounds",
    "p50 ms",
    "p95 ms",
    "idx p/s",
    "peak MB",
)


def git_revision(root: Path = REPO_ROOT) -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def _row(r: Record) -> list[str]:
    return [
        r.set,
        r.mode,
        str(r.n),
        f"{r.r2:.3f}",
        f"{r.r5:.3f}",
        f"{r.ar5:.3f}",
        f"{r.answer_in_evidence:.3f}",
        "-" if r.answer_in_answer is None else f"{r.answer_in_answer:.3f}",
        f"{r.cited_recall:.3f}",
        "-" if r.decline_rate is None else f"{r.decline_rate:.3f}",
        f"{r.rounds:.2f}",
        f"{r.p50_ms:.0f}",
        f"{r.p95_ms:.0f}",
        f"{r.index_pps:.1f}" + ("*" if r.index_cached else ""),
        f"{r.peak_rss_mb:.0f}",
    ]


def table(records: Sequence[Record], *, title: str) -> Table:
    out = Table(title=title, show_header=True)
    for col in COLUMNS:
        out.add_column(col, justify="left" if col in {"set", "mode"} else "right")
    for r in records:
        out.add_row(*_row(r))
    return out


def acme_lines(records: Sequence[Record]) -> list[str]:
    """The folder-eval numbers (acme and any other eval folder), per mode and kind; forbidden docs are shouted."""
    lines = []
    for r in records:
        x = r.extra
        if "by_kind" not in x:
            continue
        lines.append(
            f"{r.set} {r.mode}: answer correct {_pct(x['correct'])}, correct declines "
            f"{_pct(x['correct_declines'])} ({x['decline_n']}), conflicts with both sides "
            f"{_pct(x['conflicts_both_sides'])}, follow-ups {_pct(x['followups_correct'])}, evidence R@5 "
            f"{r.r5:.3f}, cited recall {r.cited_recall:.3f}, forbidden {x['forbidden']}"
        )
        kinds = ", ".join(f"{kind} {_pct(v['correct'])} (n={v['n']})" for kind, v in x["by_kind"].items())
        lines.append(f"  by kind: {kinds}")
        coverage = {k: v["coverage@10"] for k, v in x["by_kind"].items() if "coverage@10" in v}
        if coverage:
            lines.append("  coverage@10: " + ", ".join(f"{k} {_pct(v)}" for k, v in coverage.items()))
        if "llm_calls_mean" in x:
            lines.append(
                f"  model: {x['llm_calls_mean']} calls (max {x['llm_calls_max']}) and {x['llm_tokens_mean']:.0f} "
                f"tokens (max {x['llm_tokens_max']}) per question, fallback rate {_pct(x['llm_fallback_rate'])}, "
                f"worst overrun of the question deadline {x['llm_max_over_deadline_s']:.2f}s, "
                f"offline second reader added to {_pct(x.get('llm_second_reader_share', 0.0))} of questions"
            )
        if x["forbidden"]:
            for f in x["forbidden_items"]:
                lines.append(
                    f"  FORBIDDEN DOCUMENT SEEN: {f['id']} asked by {f['asker']}: {', '.join(f['docs'])}"
                )
    return lines


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def markdown(records: Sequence[Record], meta: dict[str, Any]) -> str:
    lines = [
        f"# Sleuth bench {meta['revision']} ({meta['started_at']})",
        "",
        f"Embedder `{meta['embedder']}`, {meta['cpus']} CPUs, Python {meta['python']}. "
        "`*` after idx p/s: the index was reopened from cache (the number is the build's).",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(_row(r)) + " |" for r in records]
    acme = acme_lines(records)
    if acme:
        lines += ["", "## folder evals (acme and others)", "", *[f"- {line}" for line in acme]]
    lines += [
        "",
        "R@k: share of gold passages among the first k distinct passages handed to the answer step, "
        "averaged. AR@5: all gold in the top 5. ans∈ev: the normalised gold answer or an alias occurs in "
        "the cited passages (single-shot modes and naive-hop cite their top 5; yes/no answers are not "
        "scored). ans∈ans: the same in the posted answer text (its sentences and conflict sides, never the "
        "sources list; a declined answer holds nothing). cited R: gold passages among the cited ones. "
        "declined: share answered with 'not found'. Peak MB: the process's peak RSS so far.",
    ]
    return "\n".join(lines) + "\n"


def write_results(
    out_dir: Path, records: Sequence[Record], details: dict[str, Any], *, embedder: str, started: datetime
) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = {
        "revision": git_revision(),
        "started_at": started.astimezone(UTC).isoformat(timespec="seconds"),
        "embedder": embedder,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    stem = f"bench-{meta['revision']}-{started.astimezone(UTC):%Y%m%dT%H%M%SZ}"
    json_path, md_path = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    payload = {**meta, "records": [r.as_dict() for r in records], **details}
    json_path.write_text(json.dumps(payload, indent=1, default=_plain), encoding="utf-8")
    md_path.write_text(markdown(records, meta), encoding="utf-8")
    return json_path, md_path


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    return str(value)


@contextmanager
def progress_bars(console: Console) -> Iterator[Tracker]:
    """One rich bar per (set, mode) and per index build, drawn on `console`."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as bars:

        def track(label: str, total: int | None) -> Advance:
            task = bars.add_task(label, total=total)
            return lambda n: bars.advance(task, n)

        yield track


def present(console: Console, records: Sequence[Record], paths: Sequence[Path], *, title: str) -> None:
    if not console.is_terminal:  # pipes and files get every digit, not a table cut to 80 columns
        console = Console(file=console.file, width=max(console.width, PIPE_WIDTH))
    console.print(table(records, title=title))
    for line in acme_lines(records):
        style = (
            "bold red" if "FORBIDDEN" in line or ("forbidden 0" not in line and "by kind" not in line) else ""
        )
        console.print(line, style=style, markup=False, highlight=False)
    for r in records:
        if r.errors:
            console.print(f"{r.set} {r.mode}: {r.errors} questions failed (see the log)", style="bold red")
    for path in paths:
        console.print(f"wrote {path}", markup=False, highlight=False)
