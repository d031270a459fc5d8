"""`sleuth bench`: multi-hop retrieval benchmarks (2Wiki, MuSiQue, HotpotQA) and the acme demo-corpus eval.

loaders (files -> values), index (values -> cached store), modes (one question, one mode), metrics (pure
scores), runner (a set through modes), acme_eval (the demo eval), suite (what a command line asks for),
report (terminal table, JSON and Markdown files).
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BENCH_DATA = (
    REPO_ROOT.parent / "shared" / "bench" / "data"
)  # SLEUTH_BENCH_DATA / --bench-data override
