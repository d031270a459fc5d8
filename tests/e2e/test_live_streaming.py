"""The answer reaches its thread while the model writes it: each grounded sentence streamed (chat.startStream,
then appendStream) before the model's compose reply is finished, the checked answer with its sources at
chat.stopStream; where the model's answer is rejected, the offline answer, with its footer, replaces the drafts.
Never live where the answer could go privately (a channel under the default `asker` audience): there the
finished answer is streamed, as before.

The model is the simulator at a laptop's pace (`LAPTOP`, 8x faster), so a compose reply takes about a second
to write; the simulator records when each reply's last piece was sent, the Slack emulator when each call came.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.jobs import DONE
from bot.local_slack import GENERAL
from bot.posting import EVENT_TYPE
from bot.render import answer_markdown
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory, SlackEnv
from tests.servers.model_brains import Faithful, step_of
from tests.servers.model_sim import ModelSimulator, Say, Turn, serve
from tests.servers.model_wire import LAPTOP

QUESTION = "what is the Android 4.2 release blocked by?"
FALLBACK = "answered by the offline reader: the model gave replies Sleuth could not use"


@pytest.fixture
def sim() -> Iterator[ModelSimulator]:
    with serve(profile=LAPTOP.scaled(8)) as server:
        yield server


def _model_env(make_env: EnvFactory, sim: ModelSimulator) -> SlackEnv:
    return make_env(llm_model="openai:sim", llm_base_url=sim.base_url("openai"), llm_api_key="k")


def _compose_done(sim: ModelSimulator) -> list[float]:
    """When each compose reply's last piece was sent."""
    return [at for turn, at in sim.finished if step_of(turn) == "compose"]


def _ask_in_dm(env: SlackEnv) -> tuple[str, str]:
    dm = env.slack.open_dm(env.ids["alice@acme.io"])
    return dm, env.slack.post_as_user(env.ids["alice@acme.io"], dm, QUESTION)


def test_grounded_sentences_reach_the_thread_before_the_model_has_finished(
    make_env: EnvFactory, sim: ModelSimulator
) -> None:
    sim.respond = Faithful()
    env = _model_env(make_env, sim)
    dm, ts = _ask_in_dm(env)

    [answer] = env.wait_answers(dm, ts)

    [start] = env.slack.timed_calls_to("chat.startStream")
    [compose_done] = _compose_done(sim)
    assert start.at < compose_done  # the first grounded sentence was in the thread while the model wrote
    appended = env.slack.timed_calls_to("chat.appendStream")
    assert any(a.at < compose_done for a in appended)  # and the next ones as each was grounded
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, dm, ts)
    assert job.result is not None
    final = answer_markdown(job.result["answer"])
    first = start.params["markdown_text"]
    assert first and final.startswith(first)  # a sentence of the checked answer, as it is shown at the end
    assert answer["text"] == final  # the stream went on from the drafts: nothing shown twice or dropped
    shown = format_message(answer)
    assert "*Sources*" in shown and "Confidence" in shown and "offline reader" not in shown
    assert (answer["metadata"] or {}).get("event_type") == EVENT_TYPE
    assert env.slack.bot_messages(dm, ts) == [answer]  # the placeholder made way for it
    assert len(env.slack.calls_to("chat.stopStream")) == 1 and env.bot.jobs.counts() == {DONE: 1}


def test_a_rejected_model_answer_is_replaced_by_the_offline_one_with_its_footer(
    make_env: EnvFactory, sim: ModelSimulator
) -> None:
    faithful = Faithful()

    def compose_cut(turn: Turn) -> object:  # grounded sentences, but every compose reply cut at the cap
        reply = faithful(turn)
        return Say(reply, cut=True) if step_of(turn) == "compose" else reply

    sim.respond = compose_cut
    env = _model_env(make_env, sim)
    dm, ts = _ask_in_dm(env)

    [answer] = env.wait_answers(dm, ts)

    [start] = env.slack.timed_calls_to("chat.startStream")
    assert start.at < _compose_done(sim)[0]  # the model's draft was shown while it wrote
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, dm, ts)
    assert job.result is not None and job.result["answer"]["fallbacks"]
    [update] = [c for c in env.slack.calls_to("chat.update") if c["ts"] == answer["ts"]]
    kept = [{k: v for k, v in b.items() if k != "block_id"} for b in answer["blocks"]]
    assert update["blocks"] == kept  # the whole offline answer replaced the drafts
    assert all(b["type"] != "markdown" for b in answer["blocks"])  # no streamed draft text left
    shown = format_message(answer)
    assert "*Sources*" in shown and FALLBACK in shown
    assert env.slack.bot_messages(dm, ts) == [answer] and env.bot.jobs.counts() == {DONE: 1}


def test_where_the_answer_could_go_privately_nothing_is_streamed_before_it_is_checked(
    make_env: EnvFactory, sim: ModelSimulator
) -> None:
    sim.respond = Faithful()
    env = _model_env(make_env, sim)
    ts = env.mention("alice@acme.io", QUESTION)  # #general under the default `asker` audience

    [answer] = env.wait_answers(GENERAL, ts)

    [start] = env.slack.timed_calls_to("chat.startStream")
    assert start.at > max(_compose_done(sim))  # the finished, checked answer was streamed
    assert "*Sources*" in format_message(answer)


def test_a_draft_slack_fails_on_never_costs_the_answer(make_env: EnvFactory, sim: ModelSimulator) -> None:
    sim.respond = Faithful()
    env = _model_env(make_env, sim)
    env.slack.fail_next("chat.appendStream", "invalid_arguments", status=200)  # the first draft's append
    dm, ts = _ask_in_dm(env)

    [answer] = env.wait_answers(dm, ts)

    assert len(env.slack.calls_to("chat.startStream")) == 1  # no second stream: the drafts' one is finished
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, dm, ts)
    assert job.result is not None and job.result["stream"]["ts"] == answer["ts"]
    [update] = [c for c in env.slack.calls_to("chat.update") if c["ts"] == answer["ts"]]
    assert update["text"] == answer["text"]  # what reached the stream is unknown: the answer written whole
    assert "*Sources*" in format_message(answer) and env.bot.jobs.counts() == {DONE: 1}
    assert env.slack.bot_messages(dm, ts) == [answer]
