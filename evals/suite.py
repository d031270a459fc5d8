"""What `sleuth bench` runs: the known sets, a question file given on the command line, and the acme eval."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from connectors.knowledge.embedder import build_embedder
from connectors.knowledge.embedding import Embedder
from evals import DEFAULT_BENCH_DATA as DEFAULT_BENCH_DATA
from evals.folder_eval import run_folder_eval
from evals.loaders import FORMATS, KNOWN_SETS, BenchDataError, load_known_set, load_set
from evals.modes import MODEL_MODES, MODES
from evals.runner import Record, Tracker, no_tracker, run_set
from graph_flows.reasoners.base import Reasoner

ACME = "acme"
ALL = "all"
EMBEDDERS = (
    "minilm",
    "minilm-fp32",
    "hash",
)  # minilm is the default int8 model; minilm-fp32 its float original
SET_NAMES = (*KNOWN_SETS, ACME)
_LABEL = re.compile(r"[^a-z0-9_.-]+")


@dataclass(frozen=True)
class BenchRequest:
    """What `sleuth bench` runs. As the command line gives it, `sets` and `modes` are as typed (`make_request`
    checks it and settles them: known set names and/or "acme", empty with `questions` given; mode names)."""

    sets: tuple[str, ...]
    modes: tuple[str, ...]
    embedder: str
    data_dir: Path  # index caches live under data_dir/bench-cache
    bench_data: Path
    examples_dir: Path
    limit: int | None = None
    questions: Path | None = None
    corpus: Path | None = None
    format: str | None = None
    llm_reasoner: Callable[[], Reasoner] | None = None  # built by the caller from its settings
    eval_folders: tuple[Path, ...] = ()  # other folder corpora with their own eval.jsonl (same kinds as acme)


@dataclass
class SuiteResult:
    records: list[Record] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def forbidden(self) -> int:
        return sum(int(r.extra.get("forbidden", 0)) for r in self.records)

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.records)


def split_names(values: Sequence[str] | None) -> list[str]:
    """Repeated options and comma lists alike: ["a,b", "c"] -> ["a", "b", "c"]."""
    return [v.strip() for value in values or () for v in value.split(",") if v.strip()]


def make_request(raw: BenchRequest) -> BenchRequest:
    """Checks the request as the command line gave it (sets and modes as typed: repeats, comma lists, "all", or
    nothing for everything) and returns the one the suite runs; raises BenchDataError with a message for the user.
    """
    chosen = split_names(raw.sets)
    if (not chosen and raw.questions is None and not raw.eval_folders) or ALL in chosen:
        chosen = list(SET_NAMES)
    unknown = [s for s in chosen if s not in SET_NAMES]
    if unknown:
        raise BenchDataError(f"unknown set {', '.join(unknown)}; one of {', '.join(SET_NAMES)} or {ALL}")
    available = [m for m in MODES if m not in MODEL_MODES or raw.llm_reasoner is not None]
    chosen_modes = split_names(raw.modes) or available
    if ALL in chosen_modes:
        chosen_modes = available
    bad = [m for m in chosen_modes if m not in MODES]
    if bad:
        raise BenchDataError(f"unknown mode {', '.join(bad)}; one of {', '.join(MODES)}")
    unconfigured = [m for m in chosen_modes if m not in available]
    if unconfigured:
        raise BenchDataError(
            f"mode {', '.join(unconfigured)} needs a model: set SLEUTH_LLM_MODEL (and _BASE_URL)"
        )
    if raw.format is not None and raw.format not in FORMATS:
        raise BenchDataError(f"unknown format {raw.format}; one of {', '.join(FORMATS)}")
    if raw.embedder not in EMBEDDERS:
        raise BenchDataError(f"unknown embedder {raw.embedder}; one of {', '.join(EMBEDDERS)}")
    missing = [str(f) for f in raw.eval_folders if not (f / "eval.jsonl").is_file()]
    if missing:
        raise BenchDataError(f"no eval.jsonl in {', '.join(missing)}")
    if raw.corpus is not None and raw.questions is None:
        raise BenchDataError("--corpus needs --questions")
    return replace(raw, sets=tuple(dict.fromkeys(chosen)), modes=tuple(dict.fromkeys(chosen_modes)))


def custom_label(questions: Path, fmt: str | None) -> str:
    stem = _LABEL.sub("-", questions.stem.lower()).strip("-") or "questions"
    return f"{fmt}-{stem}" if fmt else stem


def bench_embedder(name: str, data_dir: Path) -> Embedder:
    """One of EMBEDDERS; the int8 model is built once into `data_dir/models`, as `sleuth serve` keeps it."""
    if name.startswith("minilm"):
        precision = "fp32" if name == "minilm-fp32" else "int8"
        return build_embedder("minilm", precision=precision, cache_dir=data_dir / "models")
    return build_embedder(name)


def run_suite(request: BenchRequest, *, tracker: Tracker = no_tracker) -> SuiteResult:
    embedder = bench_embedder(request.embedder, request.data_dir)
    result = SuiteResult(details={"index": {}, "questions": [], "acme": {}})
    benches = [
        load_known_set(name, request.bench_data, limit=request.limit) for name in request.sets if name != ACME
    ]
    if request.questions is not None:
        label = custom_label(request.questions, request.format)
        benches.append(
            load_set(label, request.questions, request.corpus, request.format, limit=request.limit)
        )
    for bench in benches:
        run = run_set(
            bench,
            request.modes,
            embedder,
            request.data_dir,
            tracker=tracker,
            llm_reasoner=request.llm_reasoner,
        )
        result.records += run.records
        result.details["index"][bench.name] = asdict(run.index)
        result.details["questions"] += [asdict(q) for q in run.questions]
    if ACME in request.sets:
        acme = run_folder_eval(
            request.examples_dir,
            request.modes,
            embedder,
            request.data_dir,
            limit=request.limit,
            tracker=tracker,
            llm_reasoner=request.llm_reasoner,
        )
        result.records += acme.records
        result.details["acme"] = {"sync": acme.sync, "items": [asdict(i) for i in acme.items]}
    for folder in request.eval_folders:
        run = run_folder_eval(
            folder,
            request.modes,
            embedder,
            request.data_dir,
            label=folder.name,
            limit=request.limit,
            tracker=tracker,
            llm_reasoner=request.llm_reasoner,
        )
        result.records += run.records
        result.details[folder.name] = {"sync": run.sync, "items": [asdict(i) for i in run.items]}
    return result
