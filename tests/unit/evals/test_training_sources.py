"""The training records are made again from a pinned commit exactly as the reader's training reads them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from evals.training_sources import wikiqa_records
from graph_flows.reader.training import jsonl_records
from graph_flows.reader.units import split_units

TSV = (
    "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\r\n"
    "Q1\thow tall is the quillon tower?\tD1\tQuillon Tower\tD1-0\tThe Quillon Tower is in Ostrava.\t0\r\n"
    "Q1\thow tall is the quillon tower?\tD1\tQuillon Tower\tD1-1\tIt stands 212 metres   tall.\t1\r\n"
    "Q2\twho painted the quillon tower?\tD1\tQuillon Tower\tD1-0\tThe Quillon Tower is in Ostrava.\t0\r\n"
)


def _mirror(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "src"
    (work / "data").mkdir(parents=True)
    (work / "data" / "WikiQA-dev.tsv").write_text(TSV)
    git = ["git", "-C", str(work), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "data"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout
    return work / ".git", commit.strip()


def test_wikiqa_rows_become_one_passage_per_question_read_back_unit_by_unit(tmp_path: Path) -> None:
    git_dir, commit = _mirror(tmp_path)
    records = wikiqa_records(git_dir, commit, ["data/WikiQA-dev.tsv"])
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))

    read = {r.id: r for r in jsonl_records(path)}
    answered, unanswered = read["wikiqa:dev:Q1"], read["wikiqa:dev:Q2"]
    assert answered.gold == [0] and answered.supporting == [(0, "It stands 212 metres tall.")]
    assert answered.group == "Quillon Tower" and unanswered.gold == []  # a question with no correct sentence
    units = split_units(answered.passages[0]["text"], title="Quillon Tower", passage="P")
    assert [u.text for u in units] == ["The Quillon Tower is in Ostrava.", "It stands 212 metres tall."]
