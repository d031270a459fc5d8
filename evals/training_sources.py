"""Make the reader's answer-selection training records from the pinned public commits (docs/reader.md).

Why this exists: the workplace forbids committing data fetched from a public repository, so the converted
records `make train-reader` reads (`{wikiqa,selqa,trecqa}/records.jsonl` beside `squad2/dev-v2.0.json`) are
not in this repository and are lost with the machine that made them. This script makes them again, the same
every time, from git mirrors of the commits docs/reader.md pins ("Where the data lives"), and writes a
MANIFEST.md with each input file's sha256 and the count of questions written.

Each record is in the shape `graph_flows.reader.training.jsonl_records` reads: one passage per question, its
candidate sentences in their published order, one a line (`split_units` reads each line as its own unit and
never joins two lines), `gold` [0] when a sentence is labelled correct and [] when none is (those questions
teach declining), `supporting` the correct sentences, `answers` empty (these sets label sentences, not spans).

    python -m evals.training_sources --mirror-root /work/.mirror --out ../shared/training

A mirror is `<mirror-root>/<owner>+<name>/repo` (a bare git directory, or a clone holding `.git`), as the
session's fetch leaves it; the files are read with `git show <commit>:<path>`, so no work tree is needed.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

Record = dict[str, object]
Labelled = list[tuple[str, bool]]  # a question's candidate sentences, in order, and whether each is correct


def blob(git_dir: Path, commit: str, path: str) -> bytes:
    """A file's bytes at a commit of a mirror."""
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True, capture_output=True
    ).stdout


def _clean(text: str) -> str:
    """One line: a candidate with a newline or leading blank would be read as two units or a list item's tail."""
    return " ".join(text.split())


def record(source: str, qid: str, question: str, title: str, group: str, sentences: Labelled) -> Record:
    kept = [(s, ok) for s, ok in ((_clean(s), ok) for s, ok in sentences) if s]
    supporting = [[0, s] for s, ok in kept if ok]
    return {
        "source": source,
        "id": qid,
        "question": _clean(question),
        "passages": [{"title": title, "text": "\n".join(s for s, _ in kept)}],
        "answers": [],
        "gold": [0] if supporting else [],
        "group": group,
        "supporting": supporting,
    }


def wikiqa_records(git_dir: Path, commit: str, files: Sequence[str]) -> list[Record]:
    """WikiQA TSV (QuestionID, Question, DocumentID, DocumentTitle, SentenceID, Sentence, Label), gzipped or
    not, CRs stripped; a question's rows are its document's sentences in order; the group is the title."""
    out: list[Record] = []
    for path in files:
        raw = blob(git_dir, commit, path)
        text = (gzip.decompress(raw) if path.endswith(".gz") else raw).decode("utf-8").replace("\r", "")
        split = re.sub(r"\.tsv(\.gz)?$", "", path.rsplit("/", 1)[-1]).removeprefix("WikiQA-")
        questions: dict[str, tuple[str, str, Labelled]] = {}
        lines = text.split("\n")
        assert lines[0].split("\t")[0] == "QuestionID", f"{path}: no WikiQA header"
        for line in lines[1:]:
            if not line:
                continue
            qid, question, _doc, title, _sid, sentence, label = line.split("\t")
            questions.setdefault(qid, (question, title, []))[2].append((sentence, label == "1"))
        out += [
            record("wikiqa", f"wikiqa:{split}:{qid}", q, title, title, sentences)
            for qid, (q, title, sentences) in questions.items()
        ]
    return out


def selqa_records(git_dir: Path, commit: str, files: Sequence[str]) -> list[Record]:
    """SelQA answer selection JSON: a section's sentences (`candidates`) and the indices of those that answer;
    the group is the article and section. A question repeated with its section and labels is kept once."""
    out: list[Record] = []
    seen: set[str] = set()
    for path in files:
        split = path.rsplit("-", 1)[-1].removesuffix(".json")
        for i, q in enumerate(json.loads(blob(git_dir, commit, path))):
            key = json.dumps(
                [q["question"], q["article"], q["section"], q["candidates"], sorted(q["answers"])]
            )
            if key in seen:
                continue
            seen.add(key)
            right = set(q["answers"])
            sentences = [(s, j in right) for j, s in enumerate(q["candidates"])]
            group = f"{q['article']}/{q['section']}"
            out.append(record("selqa", f"selqa:{split}:{i}", q["question"], q["article"], group, sentences))
    return out


_QA = re.compile(r"<QApairs id='(.*)'>")


def trecqa_records(git_dir: Path, commit: str, files: Sequence[str]) -> list[Record]:
    """TrecQA pseudo-XML (Yao et al. 2013): under each <QApairs id>, a <question> and its <positive> and
    <negative> sentences, each a line of tab-separated tokens followed by its tag lines; the group is the id."""
    out: list[Record] = []
    for path in files:
        split = path.rsplit("/", 1)[-1].removesuffix(".xml")
        current: tuple[str, list[str], Labelled] | None = None
        prev = ""
        for line in blob(git_dir, commit, path).decode("utf-8").splitlines():
            line = line.strip()
            if m := _QA.fullmatch(line):
                current = (m.group(1), [], [])
            elif current is not None and prev == "<question>":
                current[1].append(" ".join(line.split("\t")))
            elif current is not None and prev in ("<positive>", "<negative>"):
                current[2].append((" ".join(line.split("\t")), prev == "<positive>"))
            elif line == "</QApairs>" and current is not None:
                qid, (question,), sentences = current
                out.append(record("trecqa", f"trecqa:{split}:{qid}", question, "", qid, sentences))
                current = None
            prev = line
    return out


@dataclass(frozen=True)
class Source:
    name: str  # the folder its records go to
    repo: str
    commit: str
    files: tuple[str, ...]
    convert: Callable[[Path, str, Sequence[str]], list[Record]]


SOURCES = (
    Source(
        "wikiqa",
        "rohantilva/Google-Like-Question-Answering-System",
        "33b4bc236eebccb53dcfb396bfcccf3f88cf48dd",
        ("data/WikiQA/WikiQA-train.tsv.gz", "data/WikiQA/WikiQA-dev.tsv.gz"),
        wikiqa_records,
    ),
    Source(
        "wikiqa",
        "SiemensHalske/DataAlchemist",
        "f00790c79ec61f60151544c92701cff36fc57957",
        ("data/WikiQA-test.tsv",),
        wikiqa_records,
    ),
    Source(
        "selqa",
        "emorynlp/selqa",
        "fef3d6ac6944e2d4237165d90e5f859c71676bdd",
        ("ass/selqa-ass-dev.json", "ass/selqa-ass-test.json"),
        selqa_records,
    ),
    Source(
        "trecqa",
        "castorini/data",
        "056cbbcbf997cc0b35032430110c5e5e5525700a",
        ("TrecQA/data/TRAIN.xml", "TrecQA/data/DEV.xml", "TrecQA/data/TEST.xml"),
        trecqa_records,
    ),
)


def git_dir_of(mirror_root: Path, repo: str) -> Path:
    base = mirror_root / repo.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def build(mirror_root: Path, out: Path) -> str:
    """Write every source's records.jsonl under `out`; returns the manifest's text."""
    records: dict[str, list[Record]] = {}
    rows: list[str] = []
    for source in SOURCES:
        git_dir = git_dir_of(mirror_root, source.repo)
        for path in source.files:  # one file at a time, for its count
            made = source.convert(git_dir, source.commit, [path])
            records.setdefault(source.name, []).extend(made)
            digest = hashlib.sha256(blob(git_dir, source.commit, path)).hexdigest()
            rows.append(
                f"| {source.name} | {source.repo} | {source.commit} | `{path}` | {digest} | {len(made):,} |"
            )
    for name, made in records.items():
        ids = [r["id"] for r in made]
        assert len(ids) == len(set(ids)), f"{name}: repeated ids"
        (out / name).mkdir(parents=True, exist_ok=True)
        lines = (json.dumps(r, ensure_ascii=False) for r in made)
        (out / name / "records.jsonl").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    counts = ", ".join(f"{name} {len(made):,}" for name, made in records.items())
    total = sum(len(made) for made in records.values())
    squad = out / "squad2" / "dev-v2.0.json"
    squad_line = (
        f"`squad2/dev-v2.0.json` (chrischute/squad @ 85623adeb9e6639f145081fea9cae2d8f3a26379, "
        f"`data/dev-v2.0.json`, sha256 {hashlib.sha256(squad.read_bytes()).hexdigest()}) is copied, "
        "not made here."
        if squad.exists()
        else "`squad2/dev-v2.0.json` is not here: copy it from chrischute/squad (docs/reader.md)."
    )
    return "\n".join(
        [
            "# Training data manifest",
            "",
            "Made by `python -m evals.training_sources` (Sleuth) from git mirrors of the pinned commits; the "
            "sha256 is of each file as stored at the commit (before any decompression). Questions: the count "
            "written to `<source>/records.jsonl` from that file.",
            "",
            "| source | repository | commit | file | sha256 | questions |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            f"Questions written: {total:,} ({counts}).",
            "",
            squad_line,
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=Path("../shared/training"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = build(args.mirror_root, args.out)
    (args.out / "MANIFEST.md").write_text(manifest, encoding="utf-8")
    print(manifest)


if __name__ == "__main__":
    main()
