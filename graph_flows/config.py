"""Flow settings (the stop rules' numbers), the thresholds the flow's modules share, and the LLM reasoner's
limits. Plain models so graph_flows never imports bot, and so reading the configuration loads no model client."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

StructuredMethod = Literal["auto", "json_schema", "function_calling", "json_mode"]
PresetName = Literal["auto", "hosted", "ollama", "llamacpp", "lmstudio", "vllm", "local"]
ReasoningEffort = Literal["minimal", "low", "medium", "high"]


class FlowConfig(BaseModel):
    max_rounds: int = Field(default=3, ge=1, le=10)  # hard cap on retrieve rounds per turn
    time_budget_s: float = Field(default=20.0, gt=0)  # stop starting new rounds after this
    hits_per_query: int = Field(default=8, ge=1, le=50)
    evidence_per_round: int = Field(default=6, ge=1, le=30)
    fast_path_score: float = Field(default=0.82, ge=0, le=1)  # one hit this strong answers a simple lookup
    recursion_limit: int = Field(default=40, ge=8)
    themes: bool = True  # broad questions take the theme path (graph_flows.broad) when the store has themes
    # the offline reader states a proposal only at or above the calibrated threshold (docs/reader.md); off by
    # default: calibrated on public data, the threshold withholds most right answers on an unseen company's set
    reader_gate: bool = False


@dataclass(frozen=True)
class Thresholds:
    """Numbers the nodes and every reasoner share. Not operator settings: they are tuned on the evals and
    changed here only, with the bench per kind checked before and after."""

    relevant: float = 0.3  # relevance (the reasoner's judgement) at which a passage counts for the turn


THRESHOLDS = Thresholds()


class LLMLimits(BaseModel):
    """Timeouts, retries, output caps and the per-question budget (SLEUTH_LLM__*). The defaults below suit a
    hosted model; `preset` (auto: from the provider and URL, `reasoners.llm_presets`) sets the timing and the
    calls in flight for local servers, and a field set explicitly always wins over the preset. Self-hosted
    models usually want `context_tokens` set to the window they were started with."""

    preset: PresetName = "auto"
    temperature: float | None = Field(default=0.0, ge=0, le=2)  # None: not sent (models that reject it)
    timeout_s: float = Field(default=30.0, gt=0)  # one request
    attempts: int = Field(default=3, ge=1, le=8)  # per model call: 1 + retries on 429/5xx/timeouts
    backoff_s: float = Field(default=0.5, ge=0)  # first wait without Retry-After; doubles per retry
    max_backoff_s: float = Field(default=8.0, ge=0)
    max_calls: int = Field(default=12, ge=1)  # model requests per question, retries and repairs included
    max_tokens: int = Field(default=60_000, ge=1)  # input + output tokens per question
    max_output_tokens: int = Field(default=1500, ge=64)  # every reply is capped (max_tokens / num_predict)
    context_tokens: int = Field(default=8192, ge=1024)  # the model's window: Ollama num_ctx, prompt budget
    passage_tokens: int = Field(default=3000, ge=200)  # passages per prompt, best sentences first
    max_passages: int = Field(default=12, ge=1)  # passages shown to the model per step
    question_budget_s: float = Field(default=60.0, gt=0)  # every call of a question ends by this deadline
    compose_reserve_s: float = Field(default=12.0, ge=0)  # plan and reflect leave this much for compose
    min_call_s: float = Field(default=2.0, gt=0)  # a call with less time left is not started
    structured_output: StructuredMethod = "auto"  # auto: json_schema (OpenAI, Ollama), tools (Anthropic)
    max_in_flight: int = Field(default=8, ge=1, le=256)  # calls at once per model and host, all processes
    reasoning_effort: ReasoningEffort | None = None  # sent to reasoning models; "low" on an exhausted retry
    send_max_tokens: bool = False  # also send `max_tokens` beside `max_completion_tokens` (older llama.cpp)
    slots_dir: str | None = None  # where the cross-process call slots are kept (default: the temp dir)
