"""Feedback and gaps as a viewer reads them: hidden documents counted, never named; the digest's period and its
once-per-period claim; the feedback log's newest-verdict rule and forgetting."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from bot.digest import AdminDigest, due_period
from bot.feedback import Feedback, FeedbackLog
from bot.insights import GapReport, Viewer, cited, recurring_gaps
from bot.jobs import JobQueue
from bot.mrkdwn import plain
from bot.render_insights import cited_text, gap_line
from bot.render_trace import render_trace
from bot.settings import DigestConfig
from connectors.database import make_engine
from graph_flows.gaplog import GapLog

TUESDAY = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
TITLES = {"acme:guide": "Oakland Office Guide"}


def _titles(doc_id: str) -> str | None:
    return TITLES.get(doc_id)


@pytest.mark.parametrize(
    ("docs", "text"),
    [
        ([("acme:guide", "acme")], "Oakland Office Guide (acme)"),
        ([("acme:secret", "acme")], "1 source you cannot open"),
        ([("acme:guide", "acme"), ("acme:s1", "acme"), ("acme:s2", "jira")],
         "Oakland Office Guide (acme) and 2 sources you cannot open"),
        ([], "no sources"),
    ],
    ids=["visible", "hidden", "mixed", "none"],
)  # fmt: skip
def test_cited_documents_read_as_the_viewer_may_see_them(docs: list[tuple[str, str]], text: str) -> None:
    assert cited_text(cited(docs, _titles)) == text


def test_a_recurring_gap_reads_like_a_sentence_an_admin_can_act_on() -> None:
    report = GapReport(
        label="parking at the Oakland office",
        count=12,
        askers=["a", "b", "c"],
        first=TUESDAY,
        last=TUESDAY,
        kinds=["missing_source"],
        closest=cited([("acme:guide", "acme"), ("acme:secret", "acme")], _titles),
    )
    assert gap_line(report, 14) == (
        "12 questions in 2 weeks (from 3 people) asked about “parking at the Oakland office”; the closest "
        "passages were in Oakland Office Guide (acme) and 1 source you cannot open; nothing answers them"
    )


@pytest.mark.parametrize(
    ("config", "now", "period"),
    [
        (DigestConfig(), TUESDAY, None),  # off by default
        (DigestConfig(enabled=True, weekday=0, hour=9), TUESDAY, "2026-W49"),
        (DigestConfig(enabled=True, weekday=1, hour=11), TUESDAY, None),  # not yet this week
        (DigestConfig(enabled=True, weekday=1, hour=10), TUESDAY, "2026-W49"),
    ],
    ids=["off", "past", "not-yet", "on-the-hour"],
)
def test_the_digest_is_due_once_its_weekday_and_hour_have_come(
    config: DigestConfig, now: datetime, period: str | None
) -> None:
    assert due_period(config, now) == period


class _Slack:
    """A recording stand-in for the WebClient: DMs sent, and an optional first failure."""

    def __init__(self, fail_first: bool = False) -> None:
        self.sent: list[dict[str, Any]] = []
        self._fail = fail_first

    def conversations_open(self, users: str) -> dict[str, Any]:
        return {"channel": {"id": f"D{users}"}}

    def chat_postMessage(self, **kwargs: Any) -> None:
        if self._fail:
            self._fail = False
            raise SlackApiError("ratelimited", SlackResponse(client=None, http_verb="POST", api_url="", req_args={},
                                                             data={"ok": False, "error": "ratelimited"}, headers={},
                                                             status_code=429))  # fmt: skip
        self.sent.append(kwargs)


def _digest(tmp_path: Path, slack: _Slack, worker: str) -> AdminDigest:
    engine = make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}")
    return AdminDigest(
        engine,
        slack,  # type: ignore[arg-type]
        config=DigestConfig(enabled=True),
        admins=lambda: ["U0DANA"],
        viewer_of=lambda admin: Viewer(user=admin, admin=True, title_of=_titles),
        gaps=GapLog(engine),
        feedback=FeedbackLog(engine),
        jobs=JobQueue(engine),
        worker=worker,
    )


def test_one_digest_per_period_whichever_worker_ticks_first(tmp_path: Path) -> None:
    slack = _Slack()
    first, second = _digest(tmp_path, slack, "w1"), _digest(tmp_path, slack, "w2")
    assert first.run_due(TUESDAY) == ["U0DANA"]
    assert second.run_due(TUESDAY) == [] and first.run_due(TUESDAY) == []
    assert [m["channel"] for m in slack.sent] == ["DU0DANA"]


def test_a_digest_slack_refused_is_sent_on_a_later_tick(tmp_path: Path) -> None:
    slack = _Slack(fail_first=True)
    digest = _digest(tmp_path, slack, "w1")
    assert digest.run_due(TUESDAY) == []
    assert digest.run_due(TUESDAY) == ["U0DANA"] and len(slack.sent) == 1


def test_feedback_reads_each_persons_last_verdict_and_forgets_one_person(tmp_path: Path) -> None:
    clock = iter([1.0, 2.0, 3.0])
    log = FeedbackLog(make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}"), clock=lambda: next(clock))
    click = {"team": "T", "channel": "C", "message_ts": "1", "thread_id": "T:C:1", "trace_id": "tr1"}
    log.record(Feedback(**click, user="U1", value="good"))
    log.record(Feedback(**click, user="U2", value="bad"))
    log.record(Feedback(**click, user="U1", value="bad"))  # U1 changed their mind

    assert [(f.user, f.value) for f in log.latest()] == [("U1", "bad"), ("U2", "bad")]
    assert [f.user for f in log.latest(user="U2")] == ["U2"]
    assert log.forget("U1") == 2 and [f.user for f in log.all()] == ["U2"]


def test_an_admin_reading_a_trace_sees_hidden_names_counted_not_named() -> None:
    trace = [{"node": "retrieve", "round": 1, "direction": "text", "queries": ["km-40 price"],
              "read": ["E1", "E2"], "reading": ["Supplier Contract Terms", "Oakland Office Guide"]}]  # fmt: skip
    shown = str(render_trace("km-40 price?", trace, lambda name: name == "Supplier Contract Terms"))
    assert "Supplier Contract Terms" not in shown
    assert "Oakland Office Guide, 1 you cannot open" in shown and "km-40 price" in shown


def test_an_admin_reading_a_follow_ups_trace_sees_its_aspects_as_typed_unless_they_may_open_the_source() -> (
    None
):
    question = "who is the board sponsor of it?"
    trace = [{"node": "plan", "aspects": ["who is the board sponsor of FIN-9"], "entities": ["FIN-9"],
              "derived_from": ["acme:FIN-9"], "route": "pointed"}]  # fmt: skip
    outsider = str(render_trace(question, trace, lambda name: name == "FIN-9", can_open=lambda doc: False))
    assert "FIN-9" not in outsider and f"aspects: {question}" in outsider
    finance = str(render_trace(question, trace, can_open=lambda doc: doc == "acme:FIN-9"))
    assert "aspects: who is the board sponsor of FIN-9" in finance


def test_a_gap_label_worded_from_a_document_reads_as_typed_for_a_viewer_who_cannot_open_it(
    tmp_path: Path,
) -> None:
    log = GapLog(make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}"))
    gap = {
        "kind": "relation",
        "log_what": "who is the board sponsor of FIN-9",
        "derived_from": ["acme:FIN-9"],
    }
    log.append("who is the board sponsor of it?", [gap], asker="bob@acme.io", when=TUESDAY)
    admin = Viewer(user="U0DANA", admin=True, title_of=_titles)
    [report] = recurring_gaps(log, admin, since=None)
    assert report.label == "who is the board sponsor of it?"
    finance = Viewer(user="U0BOB", admin=True, title_of=lambda doc: "FIN-9: Late delivery credit")
    assert recurring_gaps(log, finance, since=None)[0].label == "who is the board sponsor of FIN-9"


def test_mrkdwn_reads_plainly_in_a_terminal() -> None:
    text = (
        "*Helpful rate* · asked by <@U0BOB> · <!date^1796000000^{date_short}|2026-11-30 09:00 UTC> · R&amp;D"
    )
    assert plain(text) == "Helpful rate · asked by @U0BOB · 2026-11-30 09:00 UTC · R&D"
