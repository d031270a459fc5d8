"""The answer calibration's data: public questions read through the flow, each proposal labelled by the
public answer. Names are invented."""

from __future__ import annotations

from pathlib import Path

from connectors.knowledge.embedder import HashEmbedder
from evals.reader_calibration import bench_of, read_through_flow
from graph_flows.reader.proposal import PROPOSAL_FEATURES
from graph_flows.reader.training import Record

PUMP = {
    "title": "Quillon Pump",
    "text": "The Quillon pump was built in Harwick in 1931. It holds four seals.",
}
MILL = {"title": "Tessel Mill", "text": "Tessel Mill grinds barley. Its wheel was rebuilt by Ombra Vell."}


def test_proposals_are_read_through_the_flow_and_labelled_by_the_public_answer(tmp_path: Path) -> None:
    asked = [
        Record("squad2", "q1", "Where was the Quillon pump built?", [PUMP], ["Harwick"], [0], "Quillon Pump"),
        Record(
            "squad2",
            "q2",
            "Who rebuilt the wheel of Tessel Mill?",
            [MILL],
            ["Ombra Vell"],
            [0],
            "Tessel Mill",
        ),
        Record("squad2", "q3", "Who painted the Quillon pump?", [PUMP], [], [], "Quillon Pump"),
        Record(
            "wikiqa",
            "q4",
            "What does Tessel Mill grind?",
            [MILL],
            [],
            [0],
            "Tessel Mill",
            supporting=[(0, "Tessel Mill grinds barley.")],
        ),
    ]
    bench = bench_of(asked, asked)
    assert len(bench.passages) == 2  # one passage per distinct paragraph, however many questions share it
    assert bench.questions[3].answers == ("Tessel Mill grinds barley.",)  # a correct sentence is the answer
    groups = {r.id: r.group for r in asked}
    seen: list[int] = []
    read = read_through_flow(bench, HashEmbedder(), tmp_path, groups, seen.append)
    assert seen[-1] == len(asked) and read["asked"] == len(asked)
    assert read["rows"] and all(len(row) == len(PROPOSAL_FEATURES) for row in read["rows"])
    assert len(read["rows"]) == len(read["right"]) == len(read["group"])
    assert set(read["group"]) <= {"Quillon Pump", "Tessel Mill"}
    verdict = dict(zip(read["id"], read["right"], strict=True))
    assert verdict.get("q1") is True  # the pump's place is stated from its paragraph, and counted right
    assert verdict.get("q3", False) is False  # anything stated for a question without an answer is wrong
