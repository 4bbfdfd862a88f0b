"""A learned screen beside the patterns, measured the way the patterns are, to decide whether it is worth shipping.

Run: ``.venv/bin/python benchmarks/security_classifier.py``. Not a test: pytest never collects this; it is not shipped.

The model: naive Bayes log-count ratios over the word 1-2-grams and character 3-5-grams of the patterns' normalized
text (``variants(normalize(text))[-1]``), n-grams seen in at least two training texts, each injection source weighted
equally and the negatives together as much as the injections; a text is flagged when the patterns flag it or its
score is above a threshold. Within the length cap only, as the corpus test measures.

Printed per threshold:

- leave-one-source-out: for each tuned injection source, the model retrained without it and the patterns without the
  patterns written from it alone; its detection (the sum over sources and the mean of the per-source rates) and the
  false positives on the written benign requests and hard negatives, five-fold cross-validated (each negative scored
  by a model not trained on it), the worst of the six configurations;
- held out: the model trained on every tuned source, on CyberSecEval's injections and Home Assistant's intents
  sentences, which no part of the filter was written, tuned or chosen from.

Exit status 0; the figures are for docs/concepts/safety.md and benchmarks/README.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
import json
from pathlib import Path
import re
import sys

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from custom_components.agentic_hems.security import MAX_CHARS, MAX_WORDS  # noqa: E402
from custom_components.agentic_hems.security.patterns import (  # noqa: E402
    PATTERN_SOURCES,
    PATTERNS,
    normalize,
    screen,
    variants,
)

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "security" / "corpus.jsonl"
HELD_OUT_INJECTIONS = "cyberseceval:prompt_injection"
HELD_OUT_BENIGN = "ha-intents:en"
WRITTEN_NEGATIVES = ("written:benign", "written:hard_negative")
THRESHOLDS = (6.0, 8.0, 10.0, 12.0, 14.0, 16.0)
FOLDS = 5
_WORD = re.compile(r"\w+")

type Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Row:
    text: str
    label: str
    source: str
    features: npt.NDArray[np.int64]


def ngrams(text: str) -> set[str]:
    words = _WORD.findall(variants(normalize(text.strip()))[-1])
    grams = {" ".join(words[i : i + n]) for n in (1, 2) for i in range(len(words) - n + 1)}
    joined = f" {' '.join(words)} "
    return grams | {f"#{joined[i : i + n]}" for n in (3, 4, 5) for i in range(len(joined) - n + 1)}


def load() -> list[Row]:
    raw = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").split("\n") if line]
    raw = [r for r in raw if len(r["text"].strip()) <= MAX_CHARS and len(r["text"].split()) <= MAX_WORDS]
    grams = [ngrams(r["text"]) for r in raw]
    index = {g: i for i, g in enumerate(sorted(set().union(*grams)))}
    return [
        Row(r["text"], r["label"], r["source"], np.array(sorted(index[g] for g in gs), dtype=np.int64))
        for r, gs in zip(raw, grams, strict=True)
    ]


def train(rows: list[Row], size: int) -> Floats:
    """Log-count ratios of the n-grams of ``rows`` (each injection source weighted equally, negatives as much)."""
    sources = sorted({r.source for r in rows if r.label == "injection"})
    per_source = {s: sum(r.source == s for r in rows) for s in sources}
    negatives = sum(r.label != "injection" for r in rows)
    positive, negative, seen = np.zeros(size), np.zeros(size), np.zeros(size)
    for row in rows:
        if row.label == "injection":
            positive[row.features] += 1.0 / per_source[row.source]
        else:
            negative[row.features] += len(sources) / negatives
        seen[row.features] += 1
    # both classes weigh len(sources) in total, so the smoothed log ratio is log(1 + positive) - log(1 + negative)
    return np.where(seen >= 2, np.log1p(positive) - np.log1p(negative), 0.0)


def scores(weights: Floats, rows: Iterable[Row]) -> Floats:
    return np.array([weights[r.features].sum() for r in rows])


def patterns_flag(rows: Iterable[Row], left_out: str | None) -> npt.NDArray[np.bool_]:
    patterns = [p for p, sources in zip(PATTERNS, PATTERN_SOURCES, strict=True) if sources != (left_out,)]
    return np.array([bool(screen(r.text.strip(), patterns)) for r in rows])


def main() -> int:
    rows = load()
    size = 1 + max(int(r.features.max(initial=0)) for r in rows)
    held_out = {HELD_OUT_INJECTIONS, HELD_OUT_BENIGN}
    tuned = [r for r in rows if r.source not in held_out]
    negatives = [r for r in tuned if r.source in WRITTEN_NEGATIVES]
    fold = {id(r): i % FOLDS for i, r in enumerate(negatives)}
    left_out_sources = sorted({r.source for r in tuned if r.label == "injection"})

    detected: dict[float, dict[str, tuple[int, int]]] = {t: {} for t in THRESHOLDS}
    false_pos: dict[float, dict[str, dict[str, int]]] = {
        t: {s: dict.fromkeys(WRITTEN_NEGATIVES, 0) for s in left_out_sources} for t in THRESHOLDS
    }
    for source in left_out_sources:
        own = [r for r in tuned if r.source == source]
        own_patterns, neg_patterns = patterns_flag(own, source), patterns_flag(negatives, source)
        for k in range(FOLDS):
            weights = train([r for r in tuned if r.source != source and fold.get(id(r)) != k], size)
            test = [i for i, r in enumerate(negatives) if fold[id(r)] == k]
            neg_scores = scores(weights, (negatives[i] for i in test))
            own_scores = scores(weights, own) if k == 0 else None
            for t in THRESHOLDS:
                if own_scores is not None:
                    detected[t][source] = (int((own_patterns | (own_scores > t)).sum()), len(own))
                for i, s in zip(test, neg_scores, strict=True):
                    false_pos[t][source][negatives[i].source] += bool(neg_patterns[i] or s > t)

    weights = train(tuned, size)
    outside = {name: [r for r in rows if r.source == name] for name in (HELD_OUT_INJECTIONS, HELD_OUT_BENIGN)}
    outside_patterns = {name: patterns_flag(rs, None) for name, rs in outside.items()}
    outside_scores = {name: scores(weights, rs) for name, rs in outside.items()}
    totals = {s: sum(r.source == s for r in negatives) for s in WRITTEN_NEGATIVES}

    print("threshold | LOSO detected | mean of rates | FP benign (CV, worst) | FP hard negatives (CV, worst) "
          "| held-out injections | held-out benign FP")
    baseline = {s: patterns_flag([r for r in tuned if r.source == s], s) for s in left_out_sources}
    for threshold in (None, *THRESHOLDS):
        if threshold is None:
            got = {s: (int(f.sum()), len(f)) for s, f in baseline.items()}
            fps = {
                s: {n: int(patterns_flag([r for r in negatives if r.source == n], s).sum()) for n in WRITTEN_NEGATIVES}
                for s in left_out_sources
            }
            out = {name: int(outside_patterns[name].sum()) for name in outside}
        else:
            got, fps = detected[threshold], false_pos[threshold]
            out = {name: int((outside_patterns[name] | (outside_scores[name] > threshold)).sum()) for name in outside}
        hits, n = sum(g for g, _ in got.values()), sum(m for _, m in got.values())
        mean = sum(g / m for g, m in got.values()) / len(got)
        worst = {name: max(f[name] for f in fps.values()) for name in WRITTEN_NEGATIVES}
        label = "patterns only" if threshold is None else f"{threshold:g}"
        print(
            f"{label} | {hits}/{n} {hits / n:.1%} | {mean:.1%} | {worst['written:benign']}/{totals['written:benign']} "
            f"| {worst['written:hard_negative']}/{totals['written:hard_negative']} "
            f"| {out[HELD_OUT_INJECTIONS]}/{len(outside[HELD_OUT_INJECTIONS])} "
            f"| {out[HELD_OUT_BENIGN]}/{len(outside[HELD_OUT_BENIGN])}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
