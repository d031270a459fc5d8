"""Live drafts on a Slack stream: started with the first grounded draft, appended as each one adds a sentence,
a draft that does not go on from what is shown left out, and the checked answer either goes on from the drafts
or replaces them whole; a Slack failure ends the drafts, never the answer."""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from bot.channels import ChannelConfig
from bot.jobs import EDIT, Job
from bot.live_stream import LiveStream, live_allowed
from bot.render import answer_markdown
from bot.streaming import AnswerStream

SOURCES = [{"n": 1, "url": "", "doc_id": "wiki:a"}, {"n": 2, "url": "", "doc_id": "wiki:b"}]


class _Client:
    """The streaming calls, recorded; `refuse` makes chat.startStream fail with that error."""

    def __init__(self, refuse: str | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.refuse = refuse

    def __getattr__(self, method: str) -> Any:
        def call(**params: Any) -> dict[str, Any]:
            self.calls.append((method, params))
            if method == "chat_startStream" and self.refuse:
                response = SlackResponse(client=None, http_verb="POST", api_url="", req_args={},
                                         data={"ok": False, "error": self.refuse}, headers={}, status_code=200)  # fmt: skip
                raise SlackApiError(self.refuse, response)
            return {"ok": True, "ts": "2.0"}

        return call

    def methods(self) -> list[str]:
        return [m for m, _ in self.calls]


def _job(**changes: Any) -> Job:
    values: dict[str, Any] = dict(
        id=1, team="T1", event_id="Ev1", kind="mention", channel="D1", message_ts="1.0", thread_ts="1.0",
        user="U1", text="q", trace_id="t1", response_url=None, status="running", claimed_by="w",
        attempts=1, placeholder_ts="1.5", result=None,
    )  # fmt: skip
    return Job(**{**values, **changes})


def _draft(*sentences: str) -> dict[str, Any]:
    return {"draft": True, "text": " ".join(sentences), "sources": SOURCES}


def _live(client: _Client) -> tuple[LiveStream, AnswerStream, list[dict[str, Any]]]:
    saved: list[dict[str, Any]] = []
    stream = AnswerStream(client)  # type: ignore[arg-type]
    return LiveStream(stream, _job(), saved.append), stream, saved


def test_drafts_start_the_stream_then_append_only_what_each_adds() -> None:
    client = _Client()
    live, _, saved = _live(client)
    live(_draft("One [1]."))
    live(_draft("One [1]."))  # nothing new
    live(_draft("One [1].", "Two [2]."))
    live(_draft("Other [1]."))  # does not go on from what is shown: left for the checked answer
    assert client.methods() == ["chat_startStream", "chat_appendStream"]
    one, two = answer_markdown(_draft("One [1].")), answer_markdown(_draft("One [1].", "Two [2]."))
    assert (
        client.calls[0][1]["markdown_text"] == one and client.calls[1][1]["markdown_text"] == two[len(one) :]
    )
    assert saved == [{"started": True, "ts": None}, {"started": True, "ts": "2.0"}]  # noted before it starts
    assert live.close() == {"stream": {"started": True, "ts": "2.0"}} and live.shown == two
    live(_draft("One [1].", "Two [2].", "Three."))  # closed: a call given up on writes nothing more
    assert len(client.calls) == 2


def test_the_checked_answer_goes_on_from_the_drafts_or_replaces_them() -> None:
    for final, expected in (
        ("One [1]. Two [2]. Three [2].", ["chat_appendStream", "chat_stopStream"]),
        ("Something else [1].", ["chat_stopStream", "chat_update"]),
    ):
        client = _Client()
        stream = AnswerStream(client)  # type: ignore[arg-type]
        result = {"stream": {"started": True, "ts": "2.0"}}
        full = {"text": final, "blocks": []}
        ts = stream.deliver(_job(), result, text=final, blocks=[], full=full, key="t1:part0",
                            save=lambda _: None, shown="One [1]. Two [2].")  # fmt: skip
        assert ts == "2.0" and client.methods() == expected
        if expected[0] == "chat_appendStream":
            assert client.calls[0][1]["markdown_text"] == " Three [2]."


def test_a_refused_or_failing_stream_ends_the_drafts_not_the_answer() -> None:
    refused = _Client(refuse="invalid_arguments")
    live, stream, saved = _live(refused)
    live(_draft("One [1]."))
    live(_draft("One [1].", "Two [2]."))
    assert refused.methods() == ["chat_startStream"] and stream.available  # this answer only
    assert live.close() == {} and saved[-1] == {"started": False, "ts": None}

    down = _Client(refuse="internal_error")  # not a refusal: it may have landed, so what it holds is unknown
    live, stream, _ = _live(down)
    live(_draft("One [1]."))
    assert live.shown is None and live.close() == {"stream": {"started": True, "ts": None}}


def test_live_only_where_no_answer_can_go_privately() -> None:
    assert live_allowed(_job(), ChannelConfig(), None)
    assert not live_allowed(_job(kind=EDIT), ChannelConfig(), None)
    assert not live_allowed(_job(unsolicited=True), ChannelConfig(), None)
    assert not live_allowed(_job(), ChannelConfig(reply="ephemeral"), None)
