"""A local model on a laptop, through the simulator's `LAPTOP` profile (one slot, a cold load, 21 tokens/s):
four askers at once, and calls given up on.

Time is scaled: the simulated laptop runs `SCALE` times faster than the published speed and every time limit
of the preset is divided by `SCALE` alike, so the proportions (a call's length against the timeout, four
questions queued on one slot against the question budget) are the real ones and the test takes seconds.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from bot.settings import Settings
from connectors.knowledge.store import KnowledgeStore
from graph_flows.flow import Investigator, build_flow
from graph_flows.reasoners.llm import LLMReasoner, build_reasoner, model_client
from graph_flows.reasoners.llm_client import Ledger, LLMLimits, ModelSlow
from graph_flows.reasoners.llm_presets import PRESETS
from graph_flows.reasoners.llm_schemas import ComposeOut
from tests.integration.test_llm_reasoner import ANN, FLOW, MODELS, QUESTION, model, store
from tests.servers.model_sim import Protocol, Say, serve
from tests.servers.model_wire import LAPTOP

__all__ = ["store"]
SCALE = 40.0
ASKERS = 4
_TIMES = ("timeout_s", "question_budget_s", "compose_reserve_s")


def _scaled(preset: str, tmp: str, **more: Any) -> LLMLimits:
    times = {k: float(v) / SCALE for k, v in PRESETS[preset].items() if k in _TIMES}
    return LLMLimits(
        **{**PRESETS[preset], **times}, preset=preset, min_call_s=2.0 / SCALE, backoff_s=0.0, slots_dir=tmp, **more
    )  # fmt: skip


def _ask_together(store: KnowledgeStore, reasoner: LLMReasoner) -> list[dict[str, Any]]:
    """`ASKERS` questions in their own threads at once, as the job worker's threads ask them."""
    flow = build_flow(store, reasoner, FLOW, checkpointer=InMemorySaver())
    investigator = Investigator(flow=flow, flow_settings=FLOW)
    out: list[dict[str, Any]] = [{} for _ in range(ASKERS)]
    start = threading.Barrier(ASKERS)

    def ask(i: int) -> None:
        start.wait()
        out[i] = dict(investigator.ask(f"T1:C1:{i}.0", QUESTION, asker="ann@acme.io", principals=ANN))
        out[i]["plan"] = investigator.history(f"T1:C1:{i}.0")["plan"]

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(ASKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return out


def _reasoner(base_url: str, limits: LLMLimits) -> LLMReasoner:
    settings = Settings(_env_file=None, llm_model="ollama:qwen2.5:7b", llm_base_url=base_url, llm_api_key="k")
    reasoner = build_reasoner(settings, limits=limits)
    assert isinstance(reasoner, LLMReasoner)
    return reasoner


def test_four_askers_on_one_slot_answer_from_the_model_within_the_ollama_preset(
    store: KnowledgeStore, tmp_path: Any
) -> None:
    with serve(model(), profile=LAPTOP.scaled(SCALE)) as sim:
        limits = _scaled("ollama", str(tmp_path))
        reasoner = _reasoner(sim.root, limits)
        answers = _ask_together(store, reasoner)

    assert sim.peak_in_flight == 1  # the queue is in Sleuth's slots, not behind Ollama's one slot
    for out in answers:
        usage = reasoner.usage(out["plan"])
        assert usage["fallbacks"] == [] and usage["timeouts"] == 0, usage
        assert out["answer"]["answered"] and "ENG-142" in out["answer"]["text"]
    assert len(sim.turns) >= 3 * ASKERS and sim.disconnects == 0


def test_the_hosted_timings_on_the_same_laptop_fall_back(store: KnowledgeStore, tmp_path: Any) -> None:
    """The contrast: 30 s a call and 60 s a question, as before the presets, are below a laptop's speed."""
    with serve(model(), profile=LAPTOP.scaled(SCALE)) as sim:
        reasoner = _reasoner(sim.root, _scaled("hosted", str(tmp_path)))
        answers = _ask_together(store, reasoner)

    fallbacks = [f for out in answers for f in reasoner.usage(out["plan"])["fallbacks"]]
    assert fallbacks and any("no reply in time" in f or "budget spent" in f for f in fallbacks)


@pytest.mark.parametrize("protocol", ["openai", "ollama", "anthropic"])
def test_an_abandoned_call_closes_its_stream(protocol: Protocol, tmp_path: Any) -> None:
    """A compose reply of 1,500 tokens at 21 tokens/s takes over a minute; the call is given up on after half
    a second, and the simulated server sees the client go away and stops generating."""
    long = {"sentences": [{"text": "word " * 1500, "cites": ["E1"], "quote": "x"}], "answered": True}
    with serve(lambda turn: Say(content=long), profile=replace(LAPTOP, cold_load_s=0.0)) as sim:
        settings = Settings(
            _env_file=None, llm_model=MODELS[protocol], llm_base_url=sim.base_url(protocol), llm_api_key="k"
        )
        client = model_client(
            settings, limits=LLMLimits(timeout_s=0.5, attempts=1, slots_dir=str(tmp_path), preset="hosted")
        )
        ledger = Ledger(run="r")
        client.start(ledger)
        with pytest.raises(ModelSlow):
            client.ask(ledger, "Task: compose", "{}", ComposeOut, step="compose")
        assert sim.disconnected.wait(10), "the server never saw the client go away"
        written = sim.tokens_written

    assert ledger.timeouts == 1 and ledger.unavailable is None  # the model is not disabled for the question
    assert written < 1500 // 2  # generation stopped with the stream, long before the reply's end
