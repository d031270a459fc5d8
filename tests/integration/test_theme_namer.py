"""Themes named by a model: a real langchain-openai client against the model simulator on 127.0.0.1, the real
store and sync. The model sees key terms and passages as quoted data; its label and summary are kept with their
sources; a model that is down leaves the offline labels in place."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.settings import Settings
from connectors.knowledge.store import KnowledgeStore
from connectors.sync import sync_source
from graph_flows.reasoners.llm import model_client
from graph_flows.reasoners.llm_client import LLMLimits
from graph_flows.reasoners.prompts import DATA_CLOSE, DATA_OPEN
from graph_flows.reasoners.theme_namer import ModelThemeNamer
from tests.conftest import folder
from tests.servers.model_sim import ModelSimulator, Say, Turn, serve

EVERYONE = frozenset(
    {"public", "group:acme:security", "group:acme:finance", "group:acme:hr", "group:acme:leadership"}
    | {"user:dana@acme.io"}
)


@pytest.fixture
def llm() -> Iterator[ModelSimulator]:
    with serve() as server:
        yield server


def _namer(llm: ModelSimulator) -> ModelThemeNamer:
    settings = Settings(
        _env_file=None, llm_model="openai:fake", llm_base_url=llm.base_url("openai"), llm_api_key="t"
    )
    limits = LLMLimits(timeout_s=5.0, attempts=1)
    return ModelThemeNamer(model_client(settings, limits=limits, sleep=lambda _s: None))


def test_a_model_names_and_summarises_each_theme(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path, llm: ModelSimulator
) -> None:
    store = make_store()
    sync_source(store, folder(acme_copy))

    def respond(turn: Turn) -> dict[str, str]:
        assert DATA_OPEN in turn.user and DATA_CLOSE in turn.user and "Key terms:" in turn.user
        return {"label": "Fleet operations", "summary": "What the passages cover."}

    llm.respond = respond
    named = store.themes.name_themes(_namer(llm))
    views = store.themes.views(EVERYONE)
    assert named == len(views) == len(llm.turns)
    assert all(v.summary == "Fleet operations: What the passages cover." for v in views)
    assert store.themes.name_themes(_namer(llm)) == 0  # nothing changed: nothing asked again
    assert len(llm.turns) == named


def test_a_model_that_is_down_leaves_the_offline_labels(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path, llm: ModelSimulator
) -> None:
    store = make_store()
    sync_source(store, folder(acme_copy))
    llm.respond = lambda turn: Say(status=500, error="down")
    assert store.themes.name_themes(_namer(llm)) == 0
    views = store.themes.views(EVERYONE)
    assert views and all(v.summary is None and v.label for v in views)
