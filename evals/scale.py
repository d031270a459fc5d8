"""`sleuth bench --scale 1000,10000,100000`: how indexing and questions behave as the corpus grows.

Each size gets a generated corpus of linked team pages, service pages and tickets (deterministic: the same size
gives the same documents on every machine), indexed once into `<data dir>/bench-cache/` and reopened from there on
later runs. Questions are planted in it with their gold documents: one-hop (a service's port, a ticket's root
cause) and two-hop (the team or region of the service a ticket is about). Per size the report gives index
passages/s, question p50/p95 in one retrieval mode, recall@5 on the planted questions, peak RSS and disk use.

On the server stack (`evals.stacks.ServerStack`: PostgreSQL and a Chroma server) each size is built afresh in
databases of its own, dropped afterwards; the servers' own memory is reported beside the bench process's.
"""

from __future__ import annotations

import gc
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from connectors.base import PUBLIC, Link, LinkType, SourceDoc, group_principal
from connectors.knowledge.embedding import Embedder
from connectors.knowledge.store import INDEX_FORMAT
from evals.index import CACHE_DIR
from evals.loaders import Question
from evals.memory import RssSampler
from evals.metrics import mean, percentile, recall_at
from evals.modes import ModeRunner
from evals.runner import Tracker, no_tracker
from evals.stacks import EmbeddedStack, Place, Stack

SOURCE = "scale"
GENERATOR_VERSION = 1  # bump when the generated corpus changes: cached scale indexes rebuild
DEFAULT_MODE = "loop-graph"
QUESTIONS_PER_SIZE = 40  # the same count at every size, so latencies compare like with like
RECALL_K = 5
SERVER_SAMPLE_EVERY_S = 0.5  # reading PSS walks each server process's memory map: not ten times a second
RESTRICTED = group_principal(SOURCE, "eng")  # a fifth of the documents are not public
PRINCIPALS = frozenset({PUBLIC, RESTRICTED})
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
log = logging.getLogger(__name__)

_SYLLABLES = [
    "var",
    "nok",
    "tel",
    "mi",
    "ra",
    "quen",
    "lo",
    "mar",
    "vest",
    "dra",
    "kel",
    "zun",
    "pho",
    "rin",
    "sab",
    "tor",
    "vel",
    "gan",
    "ish",
    "ub",
    "orr",
    "ty",
    "fen",
    "cav",
]
_PROJECTS = ("OPS", "PAY", "SRCH", "AUTH", "DATA", "MOB", "WEB", "INFRA")
_KINDS = ("billing", "search", "ingest", "notification", "reporting", "auth", "scheduling", "export")
_REGIONS = (
    "eu-north", "eu-west", "eu-central", "us-east", "us-west", "us-central",
    "ap-south", "ap-east", "sa-east", "ca-central", "me-south", "af-south",
)  # fmt: skip
_SYMPTOMS = (
    "timeouts", "slow responses", "duplicate messages", "missing records", "memory growth",
    "failed logins", "stale caches", "dropped connections", "high error rates", "stuck jobs",
)  # fmt: skip
_CAUSES = (
    "an expired TLS certificate", "a connection pool capped too low", "a retry storm after a failover",
    "a missing database index", "clock skew between hosts", "a full disk on the queue brokers",
    "a bad feature flag rollout", "an unbounded in-memory cache", "a DNS record pointing at an old host",
    "a schema migration that locked a table", "rate limits from an upstream partner",
    "a memory leak in the HTTP client", "a misconfigured load balancer health check",
)  # fmt: skip
_FILLER = (
    "Deploys go out on {day} after the change review.",
    "Alerts page the on-call engineer after {n} minutes of errors.",
    "The dashboard shows latency, error rate and queue depth.",
    "Configuration lives in the shared settings repository.",
    "Capacity is reviewed every {n} weeks with the platform group.",
    "Logs are kept for {n} days and then archived.",
    "Feature flags are cleaned up at the end of each quarter.",
    "Load tests run nightly against the staging copy.",
    "Secrets rotate every {n} days through the vault.",
    "Runbooks describe restarts, rollbacks and failovers.",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday")


@dataclass(frozen=True)
class ScaleRow:
    """One corpus size: the `--json` contract of `sleuth bench --scale`."""

    size: int
    passages: int
    chunks: int
    edges: int
    index_s: float
    index_pps: float
    index_cached: bool  # reopened from the cache: the index numbers are the build's
    mode: str
    questions: int
    p50_ms: float
    p95_ms: float
    p50_cpu_ms: float  # process CPU time per question: what a shared, busy machine distorts least
    p95_cpu_ms: float
    # Half the planted questions take one hop, half two (2-3 rounds, a graph walk): the overall median sits
    # between the two groups, and one question answered in fewer rounds moves it far. Per group it does not.
    p50_cpu_one_hop_ms: float
    p50_cpu_two_hop_ms: float
    recall_at_5: float
    peak_rss_mb: float  # sampled while this size was opened or built and its questions ran
    index_peak_rss_mb: float
    disk_mb: float
    errors: int = 0
    stack: str = "embedded"
    servers_peak_mb: float = 0.0  # the PostgreSQL and Chroma processes the bench started (PSS), else 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SyntheticCorpus:
    docs: list[SourceDoc]
    questions: list[Question]


def _name(n: int) -> str:
    """A made-up, unique, pronounceable name for entity number n (three syllables, four past 13824)."""
    base = len(_SYLLABLES)
    parts = [
        _SYLLABLES[(n * 7 + 3) % base],
        _SYLLABLES[(n // base) % base],
        _SYLLABLES[(n // base**2) % base],
    ]
    if n >= base**3:
        parts.append(_SYLLABLES[(n // base**3) % base])
    return "".join(parts).capitalize()


def synthetic_corpus(size: int, *, questions: int = QUESTIONS_PER_SIZE, seed: int = 0) -> SyntheticCorpus:
    """`size` documents (about 1% team pages, 40% service pages, the rest tickets) and planted questions."""
    if size < 20:
        raise ValueError(f"a scale corpus needs at least 20 documents, got {size}")
    rng = random.Random(f"{seed}:{size}")
    teams = [f"Team {_name(i)}" for i in range(max(2, size // 100))]
    n_services = size * 4 // 10
    services = [_name(len(teams) + i) for i in range(n_services)]
    facts: dict[str, dict[str, Any]] = {}
    docs: list[SourceDoc] = []

    def acl() -> frozenset[str]:
        return frozenset({RESTRICTED}) if rng.random() < 0.2 else frozenset({PUBLIC})

    def filler(k: int) -> str:
        picked = rng.sample(_FILLER, k)
        return " ".join(f.format(day=rng.choice(_DAYS), n=rng.randint(2, 30)) for f in picked)

    for i, team in enumerate(teams):
        members = ", ".join(f"{_name(size + i * 3 + j)} {_name(2 * size + i)}" for j in range(3))
        text = f"# {team}\n\n{team} is {members}. Their channel is #{team.split()[1].lower()}. {filler(2)}"
        docs.append(_doc(f"team/{i}", "page", team, text, frozenset({PUBLIC}), updated=i))
    for i, service in enumerate(services):
        team = teams[i % len(teams)]
        deps = rng.sample(services, 2) if n_services > 2 else []
        fact = {
            "team": team,
            "port": str(rng.randint(2000, 9999)),
            "region": rng.choice(_REGIONS),
            "kind": rng.choice(_KINDS),
        }
        facts[service] = fact
        depends = f" It depends on {deps[0]} and {deps[1]}." if deps else ""
        text = (
            f"# {service}\n\n{service} is the {fact['kind']} service owned by {team}. It listens on port "
            f"{fact['port']} and keeps its data in the {fact['region']} region.{depends}\n\n{filler(3)}"
        )
        links = (
            Link(target=f"{SOURCE}:team/{i % len(teams)}", type=LinkType.LINKS_TO),
            *(Link(target=f"{SOURCE}:page/{d}", type=LinkType.LINKS_TO) for d in deps),
        )
        docs.append(_doc(f"page/{service}", "page", service, text, acl(), links=links, updated=i))
    tickets: list[tuple[str, str, str]] = []  # (key, service, cause)
    for i in range(size - len(docs)):
        key = f"{_PROJECTS[i % len(_PROJECTS)]}-{1000 + i}"
        service = rng.choice(services)
        symptom, cause = rng.choice(_SYMPTOMS), rng.choice(_CAUSES)
        tickets.append((key, service, cause))
        text = (
            f"{symptom.capitalize()} in {service} since release {rng.randint(1, 40)}.{rng.randint(0, 9)}. "
            f"Root cause: {cause}. Fixed in the next release; {filler(1)}"
        )
        link = Link(target=f"{SOURCE}:page/{service}", type=LinkType.RELATES)
        docs.append(
            _doc(f"ticket/{key}", "ticket", f"{key}: {symptom} in {service}", text, acl(), links=(link,),
                 aliases=(key,), updated=i)
        )  # fmt: skip
    return SyntheticCorpus(docs=docs, questions=_plant(rng, services, facts, tickets, questions))


def _doc(
    native: str,
    kind: str,
    title: str,
    text: str,
    acl: frozenset[str],
    *,
    links: tuple[Link, ...] = (),
    aliases: tuple[str, ...] = (),
    updated: int = 0,
) -> SourceDoc:
    return SourceDoc(
        id=f"{SOURCE}:{native}",
        source=SOURCE,
        kind=kind,
        title=title,
        url=f"https://scale.example/{native}",
        text=text,
        updated_at=_EPOCH + timedelta(minutes=updated),
        acl=acl,
        links=links,
        aliases=aliases,
    )


def _plant(
    rng: random.Random,
    services: list[str],
    facts: dict[str, dict[str, Any]],
    tickets: list[tuple[str, str, str]],
    count: int,
) -> list[Question]:
    """Questions in four kinds, in turn: a service's port, a ticket's root cause (one hop), the team owning
    and the region holding the data of the service a ticket is about (two hops: ticket, then service page)."""
    out: list[Question] = []
    for n in range(count):
        key, service, cause = rng.choice(tickets)
        page, ticket = f"{SOURCE}:page/{service}", f"{SOURCE}:ticket/{key}"
        kind = n % 4
        if kind == 0:
            own = rng.choice(services)
            text, answer, gold = (
                f"Which port does {own} listen on?",
                facts[own]["port"],
                (f"{SOURCE}:page/{own}",),
            )
        elif kind == 1:
            text, answer, gold = f"What was the root cause of {key}?", cause, (ticket,)
        elif kind == 2:
            text, answer = f"Which team owns the service affected by {key}?", facts[service]["team"]
            gold = (ticket, page)
        else:
            text, answer = (
                f"In which region does the service behind {key} keep its data?",
                facts[service]["region"],
            )
            gold = (ticket, page)
        out.append(Question(id=f"q{n}", question=text, answers=(answer,), gold=gold))
    return out


def scale_folder(data_dir: Path, size: int, embedder: Embedder) -> Path:
    name = f"scale-{size}-g{GENERATOR_VERSION}-{embedder.name}-v{INDEX_FORMAT}"
    return data_dir / CACHE_DIR / "".join(c if c.isalnum() or c in "-_.@" else "_" for c in name)


def run_scale(
    sizes: Sequence[int],
    embedder: Embedder,
    data_dir: Path,
    *,
    mode: str = DEFAULT_MODE,
    questions: int = QUESTIONS_PER_SIZE,
    tracker: Tracker = no_tracker,
    stack: Stack | None = None,
) -> list[ScaleRow]:
    """Builds (or reopens) each size's index on `stack` (default: embedded, cached in `data_dir`) and runs its
    planted questions in `mode`, smallest first."""
    stack = stack or EmbeddedStack(data_dir)
    rows: list[ScaleRow] = []
    for size in sorted(set(sizes)):
        with stack.place(scale_folder(data_dir, size, embedder).name, embedder) as place:
            rows.append(_run_size(place, size, mode, questions, tracker, stack.name))
        gc.collect()  # the next size's peak should not carry this one's store
    return rows


def _run_size(place: Place, size: int, mode: str, questions: int, tracker: Tracker, stack: str) -> ScaleRow:
    corpus = synthetic_corpus(size, questions=questions)
    with RssSampler() as rss, RssSampler(SERVER_SAMPLE_EVERY_S, measure=place.servers_mb) as servers_rss:
        store, stats = place.open(corpus.docs, progress=tracker(f"index {size}", size))
        runner = ModeRunner(store)
        advance = tracker(f"{size} · {mode}", len(corpus.questions))
        latencies: list[float] = []
        cpu: list[float] = []
        cpu_by_hops: dict[int, list[float]] = {1: [], 2: []}
        recalls: list[float] = []
        errors = 0
        for q in corpus.questions:
            cpu_started = time.process_time()
            try:
                outcome = runner.run(mode, q.question, principals=PRINCIPALS, thread=f"scale:{size}:{q.id}")
            except Exception:  # a bench is an outer boundary: a broken question is a miss, counted
                log.exception("scale question failed", extra={"size": size, "question": q.id})
                errors += 1
                recalls.append(0.0)
            else:
                latencies.append(outcome.ms)
                cpu.append((time.process_time() - cpu_started) * 1000)
                cpu_by_hops[min(len(q.gold), 2)].append(cpu[-1])
                recalls.append(recall_at(outcome.ranked, q.gold, RECALL_K))
            advance(1)
    return ScaleRow(
        size=size,
        passages=stats.passages,
        chunks=stats.chunks,
        edges=stats.edges,
        index_s=stats.seconds,
        index_pps=stats.passages_per_s,
        index_cached=stats.cached,
        mode=mode,
        questions=len(corpus.questions),
        p50_ms=round(percentile(latencies, 50), 1),
        p95_ms=round(percentile(latencies, 95), 1),
        p50_cpu_ms=round(percentile(cpu, 50), 1),
        p95_cpu_ms=round(percentile(cpu, 95), 1),
        p50_cpu_one_hop_ms=round(percentile(cpu_by_hops[1], 50), 1),
        p50_cpu_two_hop_ms=round(percentile(cpu_by_hops[2], 50), 1),
        recall_at_5=round(mean(recalls), 4),
        peak_rss_mb=round(rss.peak_mb, 1),
        index_peak_rss_mb=stats.peak_rss_mb,
        disk_mb=round(place.disk_mb(), 1),
        errors=errors,
        stack=stack,
        servers_peak_mb=round(servers_rss.peak_mb, 1),
    )
