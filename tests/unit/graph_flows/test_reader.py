"""The learned reader: its features, the shipped scorer and calibration, training's data handling, and the
disjointness of its training questions from every evaluation set. Names are invented."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from graph_flows.reader import calibrator, cross_encoder, model
from graph_flows.reader.decide import decide, stated_probability
from graph_flows.reader.features import FEATURES, Candidate, featurise, question_kind, stems
from graph_flows.reader.fitting import forbidden_hashes, reliability, split_for_calibration, threshold_for
from graph_flows.reader.judge import judge_units
from graph_flows.reader.proposal import PROPOSAL_FEATURES
from graph_flows.reader.training import Record, label, question_hash, squad_records
from graph_flows.reasoners.base import ComposedSentence, Composition

ROOT = Path(__file__).resolve().parents[3]


class OverlapWeights:
    """A corpus of uniform term weights whose 'dense' similarity is word overlap: enough to tell a unit
    sharing the question's words from one that does not, without loading the embedder."""

    def idf(self, term: str) -> float:
        return 2.0 if term.startswith(("quill", "seal")) else 1.0

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        q = set(stems(query))
        return [len(q & set(stems(t))) / (len(q) or 1) for t in texts]


def unit(text: str, position: int = 0, passage: str = "E1") -> Candidate:
    return Candidate(text, "Quillon Pump", "Specs", passage, text, position)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Who signs off a Quillon order?", "person"),
        ("When was the Quillon pump released?", "time"),
        ("How many seals does the pump hold?", "quantity"),
        ("Where is the spare kept?", "place"),
        ("Why did the seal fail?", "reason"),
        ("How do I reset the pump?", "manner"),
        ("Is the pump rated for salt water?", "polar"),
        ("What fluid does the pump use?", "other"),
    ],
)
def test_question_kind_by_wh_word(question: str, kind: str) -> None:
    assert question_kind(question) == kind


def test_features_favour_the_unit_holding_the_question_words() -> None:
    question = "How many seals does the Quillon pump hold?"
    rows = featurise(
        question,
        [unit("The Quillon pump holds 4 seals.", 0), unit("Paint the housing green.", 1)],
        OverlapWeights(),
    )
    assert rows.shape == (2, len(FEATURES))
    col = {name: i for i, name in enumerate(FEATURES)}
    assert rows[0, col["lex"]] > rows[1, col["lex"]]
    assert rows[0, col["miss_unit"]] < rows[1, col["miss_unit"]]
    assert rows[0, col["type_match"]] == 1.0 and rows[1, col["type_match"]] == 0.0
    assert rows[0, col["cos_gap"]] == 0.0 and rows[1, col["cos_gap"]] < 0.0
    assert featurise(question, [], OverlapWeights()).shape == (0, len(FEATURES))


def test_shipped_scorer_loads_and_is_calibrated_monotonically() -> None:
    scorer = model.load()
    assert 0.0 < scorer.threshold <= 1.0
    assert np.all(np.diff(scorer.calibration_x) >= 0)
    assert np.all(np.diff(scorer.calibration_y) >= 0)
    assert scorer.calibration_y.min() >= 0.0 and scorer.calibration_y.max() <= 1.0
    measured = scorer.card["metrics"]["cross_validated"]
    assert measured["ece"] <= 0.05  # the model card's promise, measured on folds no fit saw
    assert scorer.card["sources"]  # the data it was fitted on is named


def test_artefact_fitted_on_other_features_is_refused(tmp_path: Path) -> None:
    data = json.loads(model.ARTEFACT.read_text())
    data["features"] = data["features"][:-1]
    bad = tmp_path / "scorer.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(model.ArtefactError):
        model.load(bad)
    with pytest.raises(model.ArtefactError):
        model.load(tmp_path / "missing.json")


def evidence(eid: str, text: str, relevance: float) -> dict:
    return {"id": eid, "title": "Quillon Pump", "text": text, "relevance": relevance, "score": relevance}


def test_judge_ranks_the_answering_unit_first() -> None:
    passages = [
        evidence("E1", "The housing is painted green. It ships in a crate.", 0.6),
        evidence("E2", "Maintenance notes.\n\nThe Quillon pump holds 4 seals.", 0.5),
    ]
    judged = judge_units("How many seals does the Quillon pump hold?", passages, OverlapWeights())
    assert judged[0].evidence_id == "E2" and "4 seals" in judged[0].candidate.text
    assert [j.score for j in judged] == sorted((j.score for j in judged), reverse=True)
    assert all(0.0 <= j.probability <= 1.0 for j in judged)


QUESTION = "How many seals does the Quillon pump hold?"
PASSAGES = [
    evidence("E1", "The housing is painted green.", 0.6),
    evidence("E2", "The Quillon pump holds 4 seals.", 0.5),
]
PLAN = {"effective_question": QUESTION, "aspects": [{"id": "a1", "text": QUESTION, "terms": []}]}


def test_where_the_composer_finds_nothing_the_reader_states_its_own_unit_only_above_the_threshold() -> None:
    threshold = calibrator.load().threshold
    out = decide(PLAN, PASSAGES, Composition([], False), {}, OverlapWeights())
    own = out.verdict if out.answered else out.verdict["alternative"]
    assert set(own["features"]) == set(PROPOSAL_FEATURES) and own["features"]["alternative"] == 1.0
    if out.answered:  # its one unit, cited, at its calibrated probability
        assert own["probability"] >= threshold and out.confidence == pytest.approx(
            own["probability"], abs=1e-4
        )
        assert out.sentences[0].cites == ["E2"] and "4 seals" in out.sentences[0].text
    else:  # a decline shows the likeliest units first
        assert own["probability"] <= threshold and out.related[0].cites == ["E2"]  # (rounded to 4 places)
    kept = decide(PLAN, PASSAGES, Composition([], False), {}, OverlapWeights(), choose=False)
    assert not kept.answered and kept.related[0].cites == ["E2"]
    assert "probability" not in kept.verdict["alternative"]  # read for calibration: features only


def proposal(eid: str) -> Composition:
    text = next(e["text"] for e in PASSAGES if e["id"] == eid)
    return Composition([ComposedSentence(text, [eid])], True)


def test_a_proposal_is_stated_only_at_or_above_the_calibrated_threshold() -> None:
    threshold = calibrator.load().threshold
    verdicts = {}
    for eid in ("E1", "E2"):
        out = decide(PLAN, PASSAGES, proposal(eid), {"a1": [eid]}, OverlapWeights(), gate=True, choose=False)
        p = out.verdict["probability"]
        assert set(out.verdict["features"]) == set(PROPOSAL_FEATURES)
        assert out.answered == (p >= threshold)
        if out.answered:
            assert out.confidence == pytest.approx(p, abs=1e-4) and out.sentences == proposal(eid).sentences
        else:
            assert out.sentences == [] and out.related[0].cites == ["E2"] and out.verdict["withheld"]
        verdicts[eid] = p
    assert verdicts["E2"] > verdicts["E1"]  # the unit that answers is the likelier proposal


def test_the_likelier_of_the_two_proposals_is_stated() -> None:
    unrelated = proposal("E1")
    kept = decide(PLAN, PASSAGES, unrelated, {"a1": ["E1"]}, OverlapWeights(), choose=False)
    assert kept.answered and kept.sentences == unrelated.sentences  # recorded, not acted on
    assert kept.verdict["alternative"]["text"] == "The Quillon pump holds 4 seals."
    chosen = decide(PLAN, PASSAGES, unrelated, {"a1": ["E1"]}, OverlapWeights())
    assert chosen.answered and chosen.sentences[0].cites == ["E2"]  # the reader's own unit answers
    assert chosen.verdict["probability"] > chosen.verdict["composer"]["probability"]
    assert chosen.confidence == pytest.approx(chosen.verdict["probability"], abs=1e-4)


def test_a_question_of_two_parts_keeps_the_composers_answer() -> None:
    two = {**PLAN, "aspects": [*PLAN["aspects"], {"id": "a2", "text": "Who makes it?", "terms": []}]}
    unrelated = proposal("E1")
    out = decide(two, PASSAGES, unrelated, {"a1": ["E1"]}, OverlapWeights())
    assert out.sentences == unrelated.sentences and 0.0 <= out.verdict["probability"] <= 1.0


def test_the_cross_encoder_reads_question_and_unit_together() -> None:
    encoder = cross_encoder.load()
    question = "Who has to sign off on travel costs above five hundred dollars?"
    texts = [
        "Trips costing more than $500 need the finance director's approval.",  # worded unlike the question
        "Travel costs are booked in the expenses portal, which is closed on Sundays.",  # its words, no answer
        "The office plants are watered on Fridays.",
    ]
    p = encoder.probabilities(question, texts)
    assert p.shape == (3,) and np.all((p >= 0) & (p <= 1))
    assert p[0] > 0.5 > p[2] and p[0] > p[1]
    assert encoder.probabilities(question, []).shape == (0,)


def test_the_cross_encoder_refuses_other_base_weights(tmp_path: Path) -> None:
    card = json.loads(cross_encoder.CARD.read_text())
    card["base_sha256"] = "0" * 64
    (tmp_path / "card.json").write_text(json.dumps(card))
    other = cross_encoder.CrossEncoder(cross_encoder.WEIGHTS, tmp_path / "card.json", cache_dir=tmp_path)
    with pytest.raises(model.ArtefactError):
        other.probabilities("Who?", ["Someone."])


def test_shipped_calibrator_loads_and_keeps_its_promises(tmp_path: Path) -> None:
    shipped = calibrator.load()
    assert np.all(np.diff(shipped.calibration_x) >= 0) and np.all(np.diff(shipped.calibration_y) >= 0)
    card = json.loads(calibrator.ARTEFACT.read_text())
    measured = card["metrics"]["cross_validated_by_document"]
    assert measured["ece"] <= 0.05
    assert measured["precision_at_threshold"] >= card["target_precision"] or shipped.threshold >= 1.0
    card["features"] = card["features"][:-1]
    bad = tmp_path / "calibration.json"
    bad.write_text(json.dumps(card))
    with pytest.raises(model.ArtefactError):
        calibrator.load(bad)
    assert calibrator.load(tmp_path / "missing.json") is None


def test_the_calibration_reads_documents_the_scorer_never_saw() -> None:
    records = [
        Record("squad2", f"q{i}", f"Question {i}?", [{"title": g, "text": "t"}], ["a"], [0], g)
        for i, g in enumerate(["Harwick", "Quillon", "Tessel", "Marrow", "Ombra", "Vell", "Sarn", "Korr"] * 3)
    ]
    scorer, held = split_for_calibration(records)
    assert held and scorer and len(scorer) + len(held) == len(records)
    assert not {r.group for r in scorer} & {r.group for r in held}


def test_reliability_and_threshold() -> None:
    rng = np.random.default_rng(3)
    probability = rng.uniform(0, 1, 5000)
    right = rng.uniform(0, 1, 5000) < probability  # calibrated by construction
    ece, table = reliability(probability, right)
    assert ece < 0.03 and sum(row["n"] for row in table) == 5000
    t = threshold_for(probability, right, target=0.9)
    assert right[probability >= t].mean() >= 0.9
    assert threshold_for(np.full(50, 0.5), np.zeros(50, dtype=bool)) == 1.0  # never precise: state nothing


def test_squad_records_and_labels(tmp_path: Path) -> None:
    raw = {
        "data": [
            {
                "title": "Quillon_Pump",
                "paragraphs": [
                    {
                        "context": "The pump was built in Harwick. It holds 4 seals.",
                        "qas": [
                            {
                                "question": "How many seals?",
                                "id": "q1",
                                "is_impossible": False,
                                "answers": [{"text": "4", "answer_start": 39}],
                            },
                            {"question": "What colour?", "id": "q2", "is_impossible": True, "answers": []},
                            {"question": "Hidden answers", "id": "q3", "answers": []},
                        ],
                    }
                ],
            }
        ]
    }
    path = tmp_path / "dev-v2.0.json"
    path.write_text(json.dumps(raw))
    records = list(squad_records(path))
    assert [r.id for r in records] == ["q1", "q2"]  # a question published without its answer is skipped
    answerable = records[0]
    assert answerable.passages[0]["title"] == "Quillon Pump" and answerable.answers == ["4"]
    holds = Candidate("It holds 4 seals.", "Quillon Pump", "", "q1:0", "", 1)
    other = Candidate("The pump was built in Harwick.", "Quillon Pump", "", "q1:0", "", 0)
    assert label(answerable, holds, True) == 1 and label(answerable, other, True) == 0
    assert label(answerable, holds, False) == 0  # its gold passage was not among the candidates
    assert label(records[1], holds, True) == 0


def test_question_hash_normalises_like_the_heldout_list() -> None:
    assert question_hash("  How many  SEALS?\n") == question_hash("how many seals?")


def test_training_questions_are_disjoint_from_every_evaluation_set() -> None:
    trained = ROOT / "docs" / "reader-training-questions.sha256"
    hashes = {line.strip() for line in trained.read_text().splitlines() if line.strip()}
    assert len(hashes) > 1000
    forbidden = forbidden_hashes(ROOT.parent / "shared", ROOT / "examples")
    acme = [
        json.loads(line)["question"]
        for line in (ROOT / "examples/acme/eval.jsonl").read_text().splitlines()
        if line.strip()
    ]
    assert question_hash(acme[0]) in forbidden  # the evaluation questions were read
    assert not hashes & forbidden


def test_random_records_stay_out_of_their_gold_when_dropped() -> None:
    from graph_flows.reader.training import CorpusWeights, candidates_for

    passages = [{"title": f"T{i}", "text": f"Passage {i} says quill{i} things."} for i in range(6)]
    record = Record("x", "r1", "What does quill0 say?", passages, ["quill0"], [0], "g")
    weights = CorpusWeights([p["text"] for p in passages], embed=lambda texts: np.ones((len(texts), 2)))
    seen_dropped = seen_kept = False
    for seed in range(20):
        candidates, present = candidates_for(record, random.Random(seed), weights)
        gold_in = any(c.passage == "r1:0" for c in candidates)
        assert gold_in == present
        seen_dropped |= not present
        seen_kept |= present
    assert seen_dropped and seen_kept


def test_stated_lines_are_as_likely_as_the_scorer_rates_their_units() -> None:
    answering = [ComposedSentence("The Quillon pump holds 4 seals.", ["E2"])]
    beside = [ComposedSentence("The housing is painted green.", ["E1"])]
    right = stated_probability(QUESTION, PASSAGES, answering, OverlapWeights())
    wrong = stated_probability(QUESTION, PASSAGES, beside, OverlapWeights())
    assert 0.0 <= wrong < right <= 1.0
    assert stated_probability(QUESTION, PASSAGES, [], OverlapWeights()) == 0.0


def test_a_unit_that_asks_is_never_the_readers_own_answer() -> None:
    asked = [evidence("E3", "How many seals does the Quillon pump hold?", 0.7), *PASSAGES]
    out = decide(PLAN, asked, Composition([], False), {}, OverlapWeights())
    own = out.sentences if out.answered else [ComposedSentence(out.verdict["alternative"]["text"], [])]
    assert all(not s.text.endswith("?") for s in own)
