from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals.loaders import BenchDataError
from evals.modes import MODEL_MODES, MODES
from evals.suite import SET_NAMES, BenchRequest, custom_label, make_request, split_names


def _request(**overrides: Any) -> BenchRequest:
    args: dict[str, Any] = {
        "sets": (),
        "modes": (),
        "embedder": "hash",
        "data_dir": Path("d"),
        "bench_data": Path("b"),
        "examples_dir": Path("e"),
    }
    return make_request(BenchRequest(**{**args, **overrides}))


def test_split_names_accepts_repeats_and_commas() -> None:
    assert split_names(["2wiki,musique", " hotpotqa ", ""]) == ["2wiki", "musique", "hotpotqa"]
    assert split_names(None) == []


def test_nothing_chosen_means_the_full_suite() -> None:
    request = _request()
    assert request.sets == SET_NAMES
    assert request.modes == tuple(m for m in MODES if m not in MODEL_MODES)  # no model configured here


def test_a_model_mode_without_a_model_says_so() -> None:
    with pytest.raises(BenchDataError, match="needs a model"):
        _request(modes=["llm"])


def test_a_slice() -> None:
    request = _request(sets=["2wiki"], modes=["loop-graph"], limit=50)
    assert (request.sets, request.modes, request.limit) == (("2wiki",), ("loop-graph",), 50)


def test_a_question_file_alone_runs_only_that_file() -> None:
    request = _request(questions=Path("q.json"), corpus=Path("c.json"), format="musique")
    assert request.sets == ()
    assert request.questions == Path("q.json")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"sets": ["squad"]}, "unknown set"),
        ({"modes": ["colbert"]}, "unknown mode"),
        ({"format": "squad", "questions": Path("q.json")}, "unknown format"),
        ({"embedder": "openai"}, "unknown embedder"),
        ({"corpus": Path("c.json")}, "--corpus needs --questions"),
    ],
)
def test_bad_requests_say_what_is_wrong(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchDataError, match=message):
        _request(**overrides)


def test_custom_label_is_safe_for_ids() -> None:
    assert custom_label(Path("/x/My Questions (v2).json"), "2wiki") == "2wiki-my-questions-v2"
    assert custom_label(Path("dev.json"), None) == "dev"
