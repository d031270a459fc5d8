"""What real models do, through the model simulator in each provider's protocol and LangChain's own clients.

Every behaviour ends in one of three visible outcomes: accepted (read leniently), repaired (asked again once,
with the reason), or rejected with the reason in the trace and the offline decision in its place; never a
silent "not found".
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.settings import Settings
from connectors.knowledge.store import KnowledgeStore
from graph_flows.reasoners.llm import check_model
from graph_flows.reasoners.llm_client import LLMLimits, ModelUnavailable
from graph_flows.reasoners.prompts import SHORTER
from tests.integration.test_llm_reasoner import (
    ANSWER_SENTENCES,
    MODELS,
    _ask,
    _notes,
    _reasoner,
    compose_reply,
    llm,
    model,
    reflect_reply,
    sleeps,
    step_of,
    store,
)
from tests.servers.model_brains import Faithful, Sloppy
from tests.servers.model_brains import step_of as brain_step_of
from tests.servers.model_sim import ModelSimulator, Protocol, Say, context_error, serve

__all__ = ["llm", "sleeps", "store"]  # fixtures shared with the reasoner's own tests
PROTOCOLS: list[Protocol] = ["openai", "ollama", "anthropic"]


def _messy(reply: dict[str, Any]) -> dict[str, Any]:
    """Nulls for every optional field it left out, nested keys nobody asked for, ids written [E1] and e1."""
    out = json.loads(json.dumps(reply))
    out["reasoning"] = {"steps": ["read", "think"], "confidence": {"value": 0.8}}
    for sentence in out.get("sentences", []):
        sentence["cites"] = [f"[{c}]" if i % 2 == 0 else c.lower() for i, c in enumerate(sentence["cites"])]
        sentence["meta"] = {"source": {"kind": "wiki"}}
        sentence["aspect"] = None
    out.setdefault("gaps", None)
    out.setdefault("conflicts", None)
    for chain in out.get("established", []):
        chain["evidence"] = [c.lower() for c in chain["evidence"]]
    out.setdefault("missing", None)
    out.setdefault("queries", None)
    return out


SHAPES: dict[str, Callable[[dict[str, Any]], Say]] = {
    "prose": lambda r: Say(content=r, prose=True, as_tool=False),
    "fenced": lambda r: Say(content=r, fenced=True, as_tool=False),
    "prose-and-fence": lambda r: Say(content=r, fenced=True, prose=True, as_tool=False),
    "nulls-extra-keys-ids": lambda r: Say(content=_messy(r)),
    "tool-call": lambda r: Say(content=r, as_tool=True),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_replies_real_models_give_are_read_without_a_repair(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float], protocol: Protocol, shape: str
) -> None:
    wrap = SHAPES[shape]
    base = model()
    llm.respond = lambda turn: wrap(base(turn))
    reasoner = _reasoner(llm, sleeps, protocol)
    out, history = _ask(store, reasoner)

    for sentence in ANSWER_SENTENCES.values():
        assert sentence in out["answer"]["text"]
    usage = reasoner.usage(history["plan"])
    assert usage["fallbacks"] == [] and usage["calls"] == 4, _notes(history, reasoner)
    assert not any("repair" in n for n in _notes(history, reasoner))
    if protocol == "ollama":
        assert all(t.body["options"]["num_ctx"] == 8192 and not t.truncated for t in llm.turns)
    if protocol == "anthropic":
        assert all(t.tool in {"PlanOut", "ReflectOut", "ComposeOut"} for t in llm.turns)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_refusal_is_rejected_with_its_reason_and_the_offline_answer_given(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float], protocol: Protocol
) -> None:
    llm.respond = model(compose=lambda ids: Say(refusal="I can't help with that request."))
    reasoner = _reasoner(llm, sleeps, protocol)
    out, history = _ask(store, reasoner)

    assert [step_of(t) for t in llm.turns][-1] == "compose"  # a refusal is not repaired
    assert any("fallback: offline (invalid reply: the model refused" in n for n in _notes(history, reasoner))
    assert out["answer"]["answered"] and "ENG-142" in out["answer"]["text"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_reply_cut_at_the_output_cap_is_asked_again_shorter(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float], protocol: Protocol
) -> None:
    cut = {"done": False}

    def compose(ids: dict[str, str]) -> Say:
        if not cut["done"]:
            cut["done"] = True
            return Say(content=compose_reply(ids), cut=True, as_tool=False)
        return Say(content=compose_reply(ids))

    llm.respond = model(compose=compose)
    reasoner = _reasoner(llm, sleeps, protocol)
    out, history = _ask(store, reasoner)

    assert SHORTER in llm.turns[-1].user and step_of(llm.turns[-2]) == "compose", _notes(history, reasoner)
    assert any("reply cut at the output cap" in n for n in _notes(history, reasoner))
    assert reasoner.usage(history["plan"])["fallbacks"] == []
    assert ANSWER_SENTENCES["ENG-142"] in out["answer"]["text"]


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_context_length_error_shows_fewer_passages(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float], protocol: Protocol
) -> None:
    shown: list[int] = []

    def compose(ids: dict[str, str]) -> Any:
        shown.append(len(ids))
        if len(shown) == 1:
            return context_error(protocol, 2048, 3100)
        return {"sentences": [{"text": text, "cites": [ids[title]], "quote": text}
                              for title, text in ANSWER_SENTENCES.items() if title in ids], "answered": True}  # fmt: skip

    respond = model(compose=compose)

    llm.respond = respond
    reasoner = _reasoner(llm, sleeps, protocol)
    out, history = _ask(store, reasoner)

    assert shown == [3, 1]
    assert any("asked again with" in n and "context" in n for n in _notes(history, reasoner))
    assert reasoner.usage(history["plan"])["fallbacks"] == [] and out["answer"]["answered"]


def test_ollama_is_given_a_window_the_prompt_fits(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float]
) -> None:
    llm.respond = model()
    reasoner = _reasoner(
        llm, sleeps, "ollama", context_tokens=2048, max_output_tokens=256, passage_tokens=3000
    )
    out, history = _ask(store, reasoner)

    assert all(
        t.body["options"] == {"num_ctx": 2048, "num_predict": 256, "temperature": 0.0} for t in llm.turns
    )
    assert not any(t.truncated for t in llm.turns) and all(t.prompt_tokens < 2048 - 256 for t in llm.turns)
    assert reasoner.usage(history["plan"])["fallbacks"] == [] and out["answer"]["answered"]


def test_the_simulated_ollama_cuts_a_prompt_over_its_window_silently(llm: ModelSimulator) -> None:
    """What happens without num_ctx: the instructions at the start are lost and the model answers prose."""
    llm.respond = Faithful()
    system = "Task: plan. " + "Instructions. " * 1200
    body = {"model": "m", "stream": False, "messages": [{"role": "system", "content": system},
                                                         {"role": "user", "content": '{"question": "q"}'}]}  # fmt: skip
    reply = httpx.post(f"{llm.root}/api/chat", json=body, timeout=5).json()
    assert llm.turns[0].truncated and "Task: plan" not in llm.turns[0].system
    assert reply["message"]["content"].startswith("I'm not sure") and reply["done_reason"] == "stop"


def test_slow_replies_end_at_the_question_deadline(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float]
) -> None:
    base = model()
    llm.respond = lambda turn: Say(content=base(turn), delay_s=1.2)
    reasoner = _reasoner(
        llm, sleeps, question_budget_s=3.0, compose_reserve_s=1.5, min_call_s=0.5, timeout_s=5.0
    )
    out, history = _ask(store, reasoner)

    fallbacks = reasoner.usage(history["plan"])["fallbacks"]
    assert fallbacks and all(f.startswith("reflect: budget spent: deadline") for f in fallbacks), fallbacks
    assert step_of(llm.turns[-1]) == "compose"  # the time kept for compose was there
    assert out["answer"]["answered"] and ANSWER_SENTENCES["Atlas Launch"] in out["answer"]["text"]


def test_paraphrased_and_reformatted_answers_are_accepted(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float]
) -> None:
    llm.respond = Faithful()
    reasoner = _reasoner(llm, sleeps)
    out, history = _ask(store, reasoner)

    assert (
        "According to Atlas Launch, the Atlas launch moved from March to May 2024." in out["answer"]["text"]
    )
    assert reasoner.usage(history["plan"])["fallbacks"] == []
    assert not any(n.startswith("rejected sentence") for n in _notes(history, reasoner))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_negated_claim_and_a_wrong_number_are_never_posted(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float], protocol: Protocol
) -> None:
    sloppy = Sloppy()
    llm.respond = sloppy
    reasoner = _reasoner(llm, sleeps, protocol)
    out, history = _ask(store, reasoner)

    notes = _notes(history, reasoner)
    assert sloppy.unfaithful and not any(s in out["answer"]["text"] for s in sloppy.unfaithful)
    assert any(n.startswith("rejected sentence ('May 2025' is not in the cited passage)") for n in notes)
    assert "were rejected" in llm.turns[-1].user and "May 2025" in llm.turns[-1].user  # one repair, listed
    assert any(n.startswith("fallback: offline (invalid reply: no grounded sentence") for n in notes)
    assert out["answer"]["answered"]  # the offline answer, not "not found"


def test_a_negated_claim_is_rejected_and_the_rest_kept(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float]
) -> None:
    negated = "ENG-142 says the Atlas launch was not blocked by the Payment Gateway migration."

    def compose(ids: dict[str, str]) -> dict[str, Any]:
        reply = compose_reply(ids)
        reply["sentences"][1]["text"] = negated  # the quote stays the passage's
        return reply

    llm.respond = model(compose=compose)
    reasoner = _reasoner(llm, sleeps)
    out, history = _ask(store, reasoner)

    notes = _notes(history, reasoner)
    assert f"rejected sentence (it negates what the passage states): {negated}" in notes
    assert "compose: 1 sentence(s) rejected; one repair asked" in notes and negated in llm.turns[-1].user
    assert (
        negated not in out["answer"]["text"] and ANSWER_SENTENCES["Payment Gateway"] in out["answer"]["text"]
    )
    assert reasoner.usage(history["plan"])["fallbacks"] == []


def test_a_claude_model_that_rejects_temperature_is_asked_without_it(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float]
) -> None:
    llm.push(Say(status=400, error="temperature is deprecated for this model."))
    llm.respond = model()
    reasoner = _reasoner(llm, sleeps, "anthropic")
    out, history = _ask(store, reasoner)

    assert llm.turns[0].body["temperature"] == 0 and all("temperature" not in t.body for t in llm.turns[1:])
    assert any("rejects temperature" in n for n in _notes(history, reasoner))
    assert reasoner.usage(history["plan"])["fallbacks"] == [] and out["answer"]["answered"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_model_check_passes_for_a_working_model(llm: ModelSimulator, protocol: Protocol) -> None:
    llm.respond = lambda turn: {"ok": True}
    settings = Settings(
        _env_file=None, llm_model=MODELS[protocol], llm_base_url=llm.base_url(protocol), llm_api_key="k"
    )
    assert check_model(settings, limits=LLMLimits(timeout_s=5)).startswith(f"{MODELS[protocol]} answered")


def test_the_model_check_reports_a_wrong_key(llm: ModelSimulator) -> None:
    llm.respond = lambda turn: Say(status=401, error="invalid api key")
    settings = Settings(
        _env_file=None, llm_model="openai:fake", llm_base_url=llm.base_url("openai"), llm_api_key="bad"
    )
    with pytest.raises(ModelUnavailable, match="HTTP 401: the key was refused"):
        check_model(settings, limits=LLMLimits(timeout_s=5))
    assert len(llm.turns) == 1  # a 401 is not retried


def test_reflect_replies_with_a_map_are_read(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float]
) -> None:
    """The shape older prompts asked for (relevance as a map, established as a map) still reads."""

    def reflect(ids: dict[str, str]) -> dict[str, Any]:
        reply = reflect_reply(ids)
        reply["relevance"] = {eid.lower(): 0.9 for eid in reply["relevance"]}
        if reply.get("established"):
            reply["established"] = {e["aspect"]: e["evidence"] for e in reply["established"]}
        return reply

    llm.respond = model(reflect=reflect)
    reasoner = _reasoner(llm, sleeps)
    out, history = _ask(store, reasoner)
    assert reasoner.usage(history["plan"])["fallbacks"] == [] and out["stop_reason"] == "sufficient"


def test_sleuth_doctor_llm_checks_the_model_at_start(llm: ModelSimulator, tmp_path: Path) -> None:
    env = {
        "SLEUTH_LLM_MODEL": "openai:sim",
        "SLEUTH_LLM_BASE_URL": llm.base_url("openai"),
        "SLEUTH_LLM_API_KEY": "k",
        "SLEUTH_DATA_DIR": str(tmp_path),
    }
    faithful = Faithful()
    llm.respond = lambda turn: faithful(turn) if brain_step_of(turn) else {"ok": True}
    result = CliRunner().invoke(app, ["doctor", "--llm", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model check"].startswith("ok: openai:sim answered in structured output")

    llm.respond = lambda turn: Say(status=401, error="invalid api key")
    result = CliRunner().invoke(app, ["doctor", "--llm", "--json"], env=env)
    assert result.exit_code == 1
    check = json.loads(result.stdout)["model check"]
    assert (
        check.startswith("failed: ") and "(HTTP 401: the key was refused: check SLEUTH_LLM_API_KEY)" in check
    )


def test_when_the_repair_fails_the_grounded_sentences_stand(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float]
) -> None:
    composes: list[int] = []

    def compose(ids: dict[str, str]) -> Any:
        composes.append(1)
        if len(composes) > 1:
            return Say(status=400, error="invalid request")
        reply = compose_reply(ids)
        reply["sentences"][0]["text"] = "The Atlas launch moved from March to June 2024."
        return reply

    llm.respond = model(compose=compose)
    reasoner = _reasoner(llm, sleeps)
    out, history = _ask(store, reasoner)

    notes = _notes(history, reasoner)
    assert any(n.startswith("compose: the repair failed (") for n in notes)
    assert "June" not in out["answer"]["text"] and ANSWER_SENTENCES["ENG-142"] in out["answer"]["text"]
    assert reasoner.usage(history["plan"])["fallbacks"] == []


def test_a_small_vllm_window_is_met_by_showing_fewer_passages(
    store: KnowledgeStore, sleeps: list[float]
) -> None:
    """A server started with a 2k window (vLLM's max_model_len) answers 400 to a prompt plus output cap over it;
    the step is asked again with half the passages instead of falling back."""

    def reflect(ids: dict[str, str]) -> dict[str, Any]:
        if len(ids) == 1 and "Atlas Launch" not in ids:  # the shrunk retry shows only the newest passage
            return {"relevance": {eid: 0.9 for eid in ids.values()}, "direction": "text"}
        return reflect_reply(ids)

    with serve(model(reflect=reflect), window=2000) as small:
        reasoner = _reasoner(small, sleeps)
        out, history = _ask(store, reasoner)
        notes = _notes(history, reasoner)
    assert any(
        "does not fit the model's context" in n and "asked again with 1 passage(s)" in n for n in notes
    )
    assert reasoner.usage(history["plan"])["fallbacks"] == [] and out["answer"]["answered"]


def test_a_reformatted_date_in_a_paraphrase_is_accepted_and_posted_as_the_source_writes_it(
    store: KnowledgeStore, llm: ModelSimulator, sleeps: list[float]
) -> None:
    reformatted = "Atlas's launch slipped from March to 2024-05."

    def compose(ids: dict[str, str]) -> dict[str, Any]:
        reply = compose_reply(ids)
        reply["sentences"][0]["text"] = reformatted  # quote: "The Atlas launch moved from March to May 2024."
        return reply

    llm.respond = model(compose=compose)
    reasoner = _reasoner(llm, sleeps)
    out, history = _ask(store, reasoner)
    assert "Atlas's launch slipped from March to May 2024." in out["answer"]["text"]  # the quote's spelling
    assert reformatted not in out["answer"]["text"]
    assert not any(n.startswith("rejected sentence") for n in _notes(history, reasoner))


def test_sleuth_doctor_llm_measures_the_model_and_recommends_a_preset(tmp_path: Path) -> None:
    """Against a simulated laptop (one slot, 300 prompt and 21 reply tokens/s, run 20 times faster): the real
    steps are accepted, the measured rates are the profile's, and the hosted budget is judged too short."""
    from tests.servers.model_wire import LAPTOP

    faithful, k = Faithful(), 20.0
    with serve(lambda t: faithful(t) if brain_step_of(t) else {"ok": True}, profile=LAPTOP.scaled(k)) as sim:
        env = {"SLEUTH_LLM_MODEL": "ollama:qwen2.5:7b", "SLEUTH_LLM_BASE_URL": sim.root,
               "SLEUTH_DATA_DIR": str(tmp_path), "SLEUTH_LLM__PRESET": "hosted",
               "SLEUTH_LLM__QUESTION_BUDGET_S": str(60 / k), "SLEUTH_LLM__TIMEOUT_S": str(30 / k)}  # fmt: skip
        result = CliRunner().invoke(app, ["doctor", "--llm", "--json"], env=env)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows["schemas"].count("accepted") == 3, rows["schemas"]
    prompt, generation = (float(x) for x in re.findall(r"(\d+(?:\.\d+)?) tokens/s", rows["model speed"]))
    assert 0.5 * 300 * k < prompt < 1.6 * 300 * k and 0.5 * 21 * k < generation < 1.3 * 21 * k, rows
    assert rows["budget"].startswith("over: a question takes") and "with 4 askers at once" in rows["budget"]
    assert (
        "SLEUTH_LLM__QUESTION_BUDGET_S=" in rows["preset"] and "SLEUTH_LLM__MAX_IN_FLIGHT=1" in rows["preset"]
    )
