"""Timing and concurrency per kind of model server, and the numbers `sleuth doctor --llm` recommends. Pure.

A hosted API answers a step in seconds and serves many calls at once; a laptop running Ollama writes about 21
tokens/s (an M4, 7B at q4) or 8 (CPU only), reads a prompt at a few hundred tokens/s and, by default
(`OLLAMA_NUM_PARALLEL=1`, llama-server `--parallel 1`, LM Studio), serves one call at a time. A question is
about three calls (plan, reflect, compose) of up to a few thousand prompt tokens and a few hundred reply
tokens, so hosted defaults (30 s a call, 60 s a question) turn every laptop answer into the offline one.

A preset fills the fields the operator did not set (`LLMLimits.model_fields_set`); what is set explicitly
wins. `auto` picks by provider and URL: Ollama by provider or its port 11434, LM Studio 1234, llama.cpp 8080,
vLLM 8000; OpenAI's and Anthropic's own APIs are `hosted`; any other OpenAI-compatible URL is `local`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from graph_flows.config import LLMLimits

PRESETS: dict[str, dict[str, Any]] = {
    "hosted": {"timeout_s": 30.0, "question_budget_s": 60.0, "compose_reserve_s": 12.0, "max_in_flight": 8},
    "vllm": {  # continuous batching: many calls at once, a GPU's speed
        "timeout_s": 60.0,
        "question_budget_s": 120.0,
        "compose_reserve_s": 30.0,
        "max_in_flight": 16,
    },
    "ollama": {  # one slot by default; the first call of a cold model also loads it
        "timeout_s": 150.0,
        "question_budget_s": 360.0,
        "compose_reserve_s": 120.0,
        "max_in_flight": 1,
    },
    "llamacpp": {  # older builds ignore max_completion_tokens
        "timeout_s": 150.0,
        "question_budget_s": 360.0,
        "compose_reserve_s": 120.0,
        "max_in_flight": 1,
        "send_max_tokens": True,
    },
    "lmstudio": {
        "timeout_s": 150.0,
        "question_budget_s": 360.0,
        "compose_reserve_s": 120.0,
        "max_in_flight": 1,
        "send_max_tokens": True,
    },
    "local": {  # an OpenAI-compatible server of unknown kind
        "timeout_s": 90.0,
        "question_budget_s": 240.0,
        "compose_reserve_s": 60.0,
        "max_in_flight": 4,
        "send_max_tokens": True,
    },
}
_PORTS = {11434: "ollama", 1234: "lmstudio", 8080: "llamacpp", 8000: "vllm"}
_HOSTED = ("api.openai.com", "api.anthropic.com")
STEP_PROMPT_TOKENS = (700, 2600, 2800)  # plan, reflect, compose: what the fixture's prompts measure
STEP_REPLY_TOKENS = (120, 350, 400)
HEADROOM = 1.5  # budget over the measured question time: a longer question, a slower moment


def preset_name(limits: LLMLimits, provider: str, base_url: str | None) -> str:
    if limits.preset != "auto":
        return limits.preset
    if provider == "ollama":
        return "ollama"
    if provider != "openai" or not base_url:
        return "hosted"
    url = urlparse(base_url)
    if (url.hostname or "") in _HOSTED:
        return "hosted"
    return _PORTS.get(url.port or 0, "local")


def resolved(limits: LLMLimits, provider: str, base_url: str | None) -> LLMLimits:
    """The limits with the preset's numbers where the operator set none."""
    name = preset_name(limits, provider, base_url)
    unset = {k: v for k, v in PRESETS[name].items() if k not in limits.model_fields_set}
    out = limits.model_copy(update={**unset, "preset": name})
    out.__pydantic_fields_set__ = set(limits.model_fields_set)  # resolving twice keeps the operator's set
    return out


@dataclass(frozen=True)
class Rates:
    """What `sleuth doctor --llm` measured on the fixture: prompt and reply tokens per second, first-call
    overhead (a cold load included), and the server's parallelism as observed."""

    prompt_tps: float
    generate_tps: float
    overhead_s: float
    parallel: int = 1


def question_seconds(rates: Rates, queued: int = 1) -> float:
    """One question's three calls at these rates, behind `queued - 1` other questions on the same slots."""
    one = sum(
        rates.overhead_s + p / max(rates.prompt_tps, 1e-6) + r / max(rates.generate_tps, 1e-6)
        for p, r in zip(STEP_PROMPT_TOKENS, STEP_REPLY_TOKENS, strict=True)
    )
    return one * max(1, math.ceil(queued / max(1, rates.parallel)))


def recommend(rates: Rates, *, concurrent: int = 4) -> dict[str, Any]:
    """The limits that fit the measured speed with `concurrent` askers sharing the server's slots."""
    longest_call = rates.overhead_s + max(STEP_PROMPT_TOKENS) / max(rates.prompt_tps, 1e-6)
    longest_call += max(STEP_REPLY_TOKENS) / max(rates.generate_tps, 1e-6)
    compose = rates.overhead_s + STEP_PROMPT_TOKENS[2] / max(rates.prompt_tps, 1e-6)
    compose += STEP_REPLY_TOKENS[2] / max(rates.generate_tps, 1e-6)
    return {
        "timeout_s": _round_up(longest_call * 2),
        "question_budget_s": _round_up(question_seconds(rates, concurrent) * HEADROOM),
        "compose_reserve_s": _round_up(compose * HEADROOM),
        "max_in_flight": max(1, rates.parallel),
    }


def _round_up(seconds: float) -> float:
    return float(max(5, math.ceil(seconds / 5) * 5))
