"""How the configured model has been doing lately, for the admin App Home: the share of reasoning steps that
fell back to the offline reasoner, and calls and tokens per answer, read from the answers' saved traces.

Read from the job table, so it covers every worker process and survives restarts. A high fallback rate means
answers are quietly offline: a wrong key or model name, a window too small, or a model that can't follow the
schema; the latest reasons say which.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.mrkdwn import clip, escape

RECENT_ANSWERS = 200  # answers the admin home summarises


@dataclass(frozen=True)
class ModelHealth:
    answers: int = 0  # answers that ran the model
    steps: int = 0
    fallbacks: int = 0
    calls: int = 0
    tokens: int = 0
    latest_reasons: list[str] = field(default_factory=list)  # newest first, distinct

    @property
    def fallback_rate(self) -> float:
        return self.fallbacks / self.steps if self.steps else 0.0


def model_usage(result: dict[str, Any]) -> dict[str, Any] | None:
    """The model usage an answer's trace recorded (`llm` on its answer step), or None (offline answer)."""
    for step in reversed(result.get("trace") or []):
        if isinstance(step, dict) and step.get("node") == "answer":
            usage = step.get("llm")
            return usage if isinstance(usage, dict) else None
    return None


def model_health(results: Iterable[dict[str, Any]], *, reasons: int = 3) -> ModelHealth:
    """Sums the usage of the answers given newest first."""
    answers = steps = fallbacks = calls = tokens = 0
    latest: list[str] = []
    for result in results:
        usage = model_usage(result)
        if usage is None:
            continue
        answers += 1
        steps += int(usage.get("steps") or 0)
        calls += int(usage.get("calls") or 0)
        tokens += int(usage.get("tokens") or 0)
        for reason in usage.get("fallbacks") or []:
            fallbacks += 1
            if len(latest) < reasons and str(reason) not in latest:
                latest.append(str(reason))
    return ModelHealth(answers, steps, fallbacks, calls, tokens, latest)


def health_text(model: str | None, health: ModelHealth) -> str:
    """The admin home's *Model* section."""
    if not model:
        return "*Model (admin)*\nNone configured: every answer comes from the offline reasoner."
    head = f"*Model (admin)* · `{escape(model)}`"
    if not health.answers:
        return f"{head}\nNo answer has used it yet."
    per_answer = (
        f"{health.calls / health.answers:.1f} calls, {health.tokens // health.answers} tokens per answer"
    )
    lines = [
        head,
        f"Last {health.answers} answer(s): fallback rate *{health.fallback_rate:.1%}* "
        f"({health.fallbacks} of {health.steps} steps answered by the offline reasoner) · {per_answer}",
    ]
    lines += [f"• {escape(clip(reason, 300))}" for reason in health.latest_reasons]
    return "\n".join(lines)
