"""Documented habits of real providers and servers, through the simulator's quirks and the real LangChain
clients: each is met before the call or by changing the request, and the answer still comes from the model.

- the newest Claude models: langchain-anthropic refuses a temperature other than the default before sending;
- Anthropic's structured output refuses type arrays (`["string", "null"]`): nullables are `anyOf`;
- a reasoning model (gpt-5-mini) spends the whole output cap on reasoning and returns empty content;
- llama.cpp and vLLM word a prompt over the window their own way;
- older llama.cpp reads only `max_tokens`; OpenAI's reasoning models refuse it;
- a list item with a null or an empty required field, and a whitespace loop of a small local model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from bot.settings import Settings
from connectors.knowledge.store import KnowledgeStore
from graph_flows.reasoners.llm import LLMReasoner, build_reasoner
from graph_flows.reasoners.llm_client import LLMLimits
from tests.integration.test_llm_reasoner import (
    ANSWER_SENTENCES,
    _ask,
    _notes,
    compose_reply,
    model,
    step_of,
    store,
)
from tests.servers.model_sim import Dialect, ModelSimulator, Protocol, Say, Turn, context_error, serve

__all__ = ["store"]


def _reasoner(sim: ModelSimulator, name: str, protocol: Protocol = "openai", **limits: Any) -> LLMReasoner:
    settings = Settings(
        _env_file=None, llm_model=f"{protocol}:{name}", llm_base_url=sim.base_url(protocol), llm_api_key="k"
    )
    reasoner = build_reasoner(
        settings, limits=LLMLimits(**{"timeout_s": 5.0, **limits}), sleep=lambda s: None
    )
    assert isinstance(reasoner, LLMReasoner)
    return reasoner


def _from_the_model(out: dict[str, Any], history: dict[str, Any], reasoner: LLMReasoner) -> None:
    usage = reasoner.usage(history["plan"])
    assert usage["fallbacks"] == [], _notes(history, reasoner)
    assert out["answer"]["answered"] and ANSWER_SENTENCES["ENG-142"] in out["answer"]["text"]


def test_the_newest_claude_model_is_asked_without_temperature_in_its_json_schema_mode(
    store: KnowledgeStore,
) -> None:
    """langchain-anthropic raises before sending a temperature to it, and it takes no forced tool (it thinks
    adaptively): the step's schema goes in `output_config`, with nullables that structured output accepts."""
    with serve(model(), quirks=frozenset({"type-arrays"})) as sim:
        reasoner = _reasoner(sim, "claude-sonnet-5-5", "anthropic")
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    assert sim.turns and all("temperature" not in t.body for t in sim.turns)
    assert all(
        t.tool is None and t.body["output_config"]["format"]["type"] == "json_schema" for t in sim.turns
    )


def test_an_older_claude_model_keeps_temperature_zero(store: KnowledgeStore) -> None:
    with serve(model()) as sim:
        reasoner = _reasoner(sim, "claude-sonnet-4-5", "anthropic")
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    assert all(t.body.get("temperature") == 0.0 for t in sim.turns)


@pytest.mark.parametrize("protocol", ["openai", "ollama", "anthropic"])
def test_a_server_that_refuses_type_arrays_accepts_the_schema(
    store: KnowledgeStore, protocol: Protocol
) -> None:
    with serve(model(), quirks=frozenset({"type-arrays"})) as sim:
        reasoner = _reasoner(sim, "claude-x" if protocol == "anthropic" else "fake", protocol)
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    assert all(t.schema and '"anyOf"' in json.dumps(t.schema) for t in sim.turns)


def test_a_reasoning_model_that_spends_its_cap_is_asked_again_with_room_and_low_effort(
    store: KnowledgeStore,
) -> None:
    quirks = frozenset({"reasoning", "no-temperature", "no-max-tokens"})
    with serve(model(), quirks=quirks) as sim:
        reasoner = _reasoner(sim, "gpt-5-mini", preset="hosted")
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    first, second = sim.turns[0], sim.turns[1]
    assert first.body["max_completion_tokens"] == 1500 and "reasoning_effort" not in first.body
    assert second.body["max_completion_tokens"] == 3000 and second.body["reasoning_effort"] == "low"
    assert all("temperature" not in t.body and "max_tokens" not in t.body for t in sim.turns)
    assert any("spent on reasoning" in n for n in _notes(history, reasoner))


def test_a_configured_reasoning_effort_is_sent(store: KnowledgeStore) -> None:
    with serve(model(), quirks=frozenset({"reasoning"})) as sim:
        reasoner = _reasoner(sim, "gpt-5-mini", preset="hosted", reasoning_effort="minimal")
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    assert all(t.body["reasoning_effort"] == "minimal" for t in sim.turns)  # spent little: no second ask


@pytest.mark.parametrize("dialect", ["llamacpp", "vllm"])
def test_a_local_server_s_context_error_shows_fewer_passages(store: KnowledgeStore, dialect: Dialect) -> None:
    shown: list[int] = []

    def compose(ids: dict[str, str]) -> Any:
        shown.append(len(ids))
        if len(shown) == 1:
            return context_error("openai", 2048, 3100, dialect)
        return {"sentences": [{"text": t, "cites": [ids[k]], "quote": t} for k, t in ANSWER_SENTENCES.items()
                              if k in ids], "answered": True}  # fmt: skip

    with serve(model(compose=compose), dialect=dialect) as sim:
        reasoner = _reasoner(sim, "local")
        out, history = _ask(store, reasoner)
    assert shown == [3, 1] and reasoner.usage(history["plan"])["fallbacks"] == []
    assert (
        any("asked again with 1 passage" in n for n in _notes(history, reasoner))
        and out["answer"]["answered"]
    )


def test_an_older_llama_cpp_gets_max_tokens_too(store: KnowledgeStore) -> None:
    with serve(model(), quirks=frozenset({"max-tokens-only"})) as sim:
        reasoner = _reasoner(sim, "qwen", preset="llamacpp")
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    assert all(t.max_tokens == 1500 and t.body["max_completion_tokens"] == 1500 for t in sim.turns)


def test_a_server_that_refuses_max_tokens_is_asked_without_it(store: KnowledgeStore) -> None:
    with serve(model(), quirks=frozenset({"no-max-tokens"})) as sim:
        reasoner = _reasoner(sim, "fake", preset="local")
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    assert "max_tokens" in sim.turns[0].body and all("max_tokens" not in t.body for t in sim.turns[1:])


def _with_bad_items(brain: Callable[[Turn], Any]) -> Callable[[Turn], Any]:
    """Every list of the reply gets a null and an item with an empty required field."""

    def respond(turn: Turn) -> Any:
        reply = json.loads(json.dumps(brain(turn)))
        step = step_of(turn)
        if step == "reflect":
            reply["established"] = [None, {"aspect": "a1", "evidence": []}, *reply.get("established", [])]
            reply["missing"] = [
                None,
                {"kind": "relation", "what": "", "clues": []},
                *reply.get("missing", []),
            ]
            relevance = reply.get("relevance", {})
            reply["relevance"] = [{"id": k, "score": v} for k, v in relevance.items()] + [None, {"score": 1}]
        if step == "compose":
            reply["sentences"] = [None, {"text": "", "cites": []}, *reply["sentences"]]
            reply["conflicts"] = [{"about": "x", "evidence": []}]
        return reply

    return respond


@pytest.mark.parametrize("protocol", ["openai", "ollama", "anthropic"])
def test_list_items_with_nulls_are_dropped_without_rejecting_the_reply(
    store: KnowledgeStore, protocol: Protocol
) -> None:
    with serve(_with_bad_items(model())) as sim:
        reasoner = _reasoner(sim, "claude-x" if protocol == "anthropic" else "fake", protocol)
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    assert not any("repair" in n for n in _notes(history, reasoner))  # nothing was asked again
    assert len(sim.turns) == len({id(t) for t in sim.turns}) and all(ANSWER_SENTENCES[k] in out["answer"]["text"]
                                                                     for k in ANSWER_SENTENCES)  # fmt: skip


@pytest.mark.parametrize("protocol", ["openai", "ollama"])
def test_a_whitespace_loop_is_stopped_and_asked_again_shorter(
    store: KnowledgeStore, protocol: Protocol
) -> None:
    looped = {"n": 0}

    def compose(ids: dict[str, str]) -> Say:
        looped["n"] += 1
        return Say(whitespace=True) if looped["n"] == 1 else Say(content=compose_reply(ids))

    with serve(model(compose=compose)) as sim:
        reasoner = _reasoner(sim, "fake", protocol)
        out, history = _ask(store, reasoner)
    _from_the_model(out, history, reasoner)
    notes = _notes(history, reasoner)
    assert any("looped on whitespace" in n for n in notes) and any("asked again, shorter" in n for n in notes)
