"""Retrieval quality against labelled questions: the questions file, what counts as a
relevant document, and the ranking metrics (hit@k, MRR@10, nDCG@10, and for multi-hop
questions full-support recall@10). Pure functions; the rankings themselves are run by
knowledge/retrieval/comparison.py.

The questions file is JSON lines, one question each:

    {"question": "how do I run several coroutines at once and wait for all of them?",
     "answers": ["library/asyncio-task.html", "snippet:Run awaitable objects in the aws"],
     "snippets": ["another passage that answers it"]}

Each answer names the documents that answer the question: a plain string matches a
document whose URL or path contains it; a string starting with `snippet:` (and every entry
of the optional `snippets` list) matches a document with a chunk whose text contains it.
Both comparisons ignore case, and snippets also differences in whitespace. A question needs
at least one answer.

A multi-hop question is one no single document answers: two pages (or more) joined by a
shared subject are all needed. Its line lists them in `requires`, each entry matched like an
answer (a locator, or a `snippet:`), each standing for one document the answer needs:

    {"question": "what grows on the cliffs of the firm Velmora relies on?",
     "requires": ["velmora-suppliers.html", "snippet:grows blue lichen on the western"]}

`answers` may then be left out (or name further relevant documents that are not needed);
a line without `requires` is a single-page question, as it always was. `requires` lists at
least two different entries: one required document is a single-page question.

Relevance is binary and at document level, because a reader is sent to a document: a
ranking of chunks becomes the ranking of their documents, each at the rank of its best
chunk (several chunks of the answering document count once), and a document is relevant
when any answer matches it. Over the first CUTOFF documents: hit@k is 1 when a relevant
document is among the first k; the reciprocal rank is 1 / the rank of the first relevant
one (0 when none); nDCG is the discounted gain of the relevant documents found (1 /
log2(rank + 1) each) over the best possible, all relevant documents first.

For a multi-hop question every document a `requires` entry matches is relevant too, so
hit@k and MRR say how soon the first piece of the answer comes. What they cannot say is
whether the rest comes at all, so a multi-hop question also has full-support recall@10: 1
when every required entry matches a document among the first CUTOFF, else 0 (an entry
matching several documents is met by any of them); and partial support, the share of its
required entries met there. Single-page questions have neither (they are averaged over
the multi-hop questions alone).

Whether one ranking beats another is a paired question — the same questions, answered
both ways — so `paired_difference` compares a per-question figure of both (reciprocal
ranks; or full support, 0 or 1, on multi-hop questions): the mean difference, wins, ties
and losses, and a 95 % confidence interval for the mean from a paired bootstrap (the
questions resampled with replacement, BOOTSTRAP_RESAMPLES times, from a fixed seed so that
a run is repeatable). A margin is clear when the interval's
lower bound is above 0: on a set this small, a mean a few questions move is not one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CUTOFF = 10
SNIPPET_PREFIX = "snippet:"
MAX_QUESTION_CHARS = 1000
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 16
CONFIDENCE = 0.95
SINGLE_PAGE = "single_page"
MULTI_HOP = "multi_hop"


class QuestionFileError(Exception):
    """The questions file cannot be read, or a line of it is not a question."""


@dataclass(frozen=True, slots=True)
class Required:
    """One document a multi-hop question needs: what matches it, as an answer does (one
    `requires` entry gives one locator or one snippet)."""

    locators: tuple[str, ...] = ()
    snippets: tuple[str, ...] = ()

    @property
    def entry(self) -> str:
        """The entry as the questions file could write it (for messages)."""
        if self.locators:
            return self.locators[0]
        return SNIPPET_PREFIX + (self.snippets[0] if self.snippets else "")


@dataclass(frozen=True, slots=True)
class Question:
    line: int  # in the questions file, for messages
    text: str
    locators: tuple[str, ...]  # URL or path substrings, lower-cased
    snippets: tuple[str, ...]  # chunk text substrings, normalised (`normalise`)
    requires: tuple[Required, ...] = ()  # every one needed: a multi-hop question

    @property
    def multi_hop(self) -> bool:
        return bool(self.requires)

    @property
    def kind(self) -> str:
        return MULTI_HOP if self.requires else SINGLE_PAGE


@dataclass(frozen=True, slots=True)
class Scores:
    hit_at_1: float
    hit_at_5: float
    mrr_at_10: float
    ndcg_at_10: float

    def as_dict(self) -> dict[str, float]:
        return {
            "hit_at_1": round(self.hit_at_1, 4),
            "hit_at_5": round(self.hit_at_5, 4),
            "mrr_at_10": round(self.mrr_at_10, 4),
            "ndcg_at_10": round(self.ndcg_at_10, 4),
        }


@dataclass(frozen=True, slots=True)
class Support:
    """How much of what a multi-hop question needs a ranking brings in its first CUTOFF
    documents: all of it (full, 0 or 1 per question) and the share of it (partial)."""

    full_at_10: float
    partial_at_10: float

    def as_dict(self) -> dict[str, float]:
        return {
            "full_support_recall_at_10": round(self.full_at_10, 4),
            "partial_support_recall_at_10": round(self.partial_at_10, 4),
        }


# --- the questions file ---------------------------------------------------------------------


def normalise(text: str) -> str:
    """Lower case, whitespace runs made one space, no space at the ends: the form snippets
    are compared in (the database side does the same: comparison.py)."""
    return " ".join(text.split()).lower()


def load_questions(path: Path) -> list[Question]:
    """The questions of a JSON-lines file (blank lines skipped); QuestionFileError says
    which line is wrong and why."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise QuestionFileError(f"Cannot read {path}: {reason}") from exc
    questions = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionFileError(f"{path}:{number}: not JSON ({exc.msg}).") from exc
        questions.append(parse_question(raw, number, str(path)))
    if not questions:
        raise QuestionFileError(f"{path}: no questions.")
    return questions


def parse_question(raw: Any, line: int, origin: str = "questions") -> Question:
    """One line's object made a Question (see the module docstring for the fields)."""
    where = f"{origin}:{line}"
    if not isinstance(raw, dict):
        raise QuestionFileError(f"{where}: expected an object with question and answers.")
    text = raw.get("question")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_QUESTION_CHARS:
        raise QuestionFileError(
            f"{where}: question must be a non-blank string of at most "
            f"{MAX_QUESTION_CHARS} characters."
        )
    answers, snippets = raw.get("answers", []), raw.get("snippets", [])
    if not _strings(answers) or not _strings(snippets):
        raise QuestionFileError(f"{where}: answers and snippets must be lists of strings.")
    requires = parse_requires(raw["requires"], where) if "requires" in raw else ()
    locators: list[str] = []
    texts = [normalise(s) for s in snippets]
    for answer in answers:
        kind, matched = answer_matcher(answer)
        (texts if kind == "snippet" else locators).append(matched)
    locators, texts = [a for a in locators if a], [s for s in texts if s]
    if not locators and not texts and not requires:
        raise QuestionFileError(f"{where}: at least one non-blank answer is needed.")
    return Question(
        line=line,
        text=text.strip(),
        locators=tuple(dict.fromkeys(locators)),
        snippets=tuple(dict.fromkeys(texts)),
        requires=requires,
    )


def answer_matcher(answer: str) -> tuple[str, str]:
    """An answer (or a `requires` entry) as ("snippet", normalised text) or ("locator",
    lower-cased substring); the text is empty when nothing is left of it."""
    if answer.startswith(SNIPPET_PREFIX):
        return "snippet", normalise(answer[len(SNIPPET_PREFIX) :])
    return "locator", answer.strip().lower()


def parse_requires(value: Any, where: str) -> tuple[Required, ...]:
    """The `requires` list of a multi-hop question. Each entry is one needed document; the
    same entry twice is one."""
    if not _strings(value) or not value:
        raise QuestionFileError(
            f"{where}: requires must be a non-empty list of strings, one per document "
            "the answer needs."
        )
    required: dict[Required, None] = {}
    for entry in value:
        kind, matched = answer_matcher(entry)
        if not matched:
            raise QuestionFileError(f"{where}: requires has a blank entry ({entry!r}).")
        needed = Required(snippets=(matched,)) if kind == "snippet" else Required((matched,))
        required[needed] = None
    if len(required) < 2:
        raise QuestionFileError(
            f"{where}: requires must list at least two different documents (a question "
            "one document answers lists it in answers)."
        )
    return tuple(required)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# --- metrics ----------------------------------------------------------------------------


def documents_in_order(document_ids: Iterable[int]) -> list[int]:
    """The documents of a chunk ranking, each once, at the rank of its best chunk."""
    return list(dict.fromkeys(document_ids))


def relevance(ranked_documents: Sequence[int], relevant: set[int]) -> list[bool]:
    """Whether each of the first CUTOFF documents is relevant."""
    return [d in relevant for d in ranked_documents[:CUTOFF]]


def hit_at(relevant: Sequence[bool], k: int) -> float:
    """1.0 when a relevant document is among the first k, else 0.0."""
    return 1.0 if any(relevant[:k]) else 0.0


def reciprocal_rank(relevant: Sequence[bool], k: int = CUTOFF) -> float:
    """1 / the rank of the first relevant document among the first k (0.0 when none)."""
    for rank, is_relevant in enumerate(relevant[:k], start=1):
        if is_relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at(relevant: Sequence[bool], relevant_count: int, k: int = CUTOFF) -> float:
    """Discounted cumulative gain of the first k over the ideal one, where all
    `relevant_count` relevant documents (at most k) come first; 0.0 when none exists."""
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(relevant_count, k) + 1))
    if ideal == 0:
        return 0.0
    gained = sum(
        1.0 / math.log2(rank + 1)
        for rank, is_relevant in enumerate(relevant[:k], start=1)
        if is_relevant
    )
    return gained / ideal


def first_relevant_rank(ranked_documents: Sequence[int], relevant: set[int]) -> int | None:
    """The rank of the first relevant document among the first CUTOFF (None: not there)."""
    for rank, document in enumerate(ranked_documents[:CUTOFF], start=1):
        if document in relevant:
            return rank
    return None


def score_ranking(ranked_documents: Sequence[int], relevant: set[int]) -> Scores:
    """The four figures of one question's document ranking."""
    flags = relevance(ranked_documents, relevant)
    return Scores(
        hit_at_1=hit_at(flags, 1),
        hit_at_5=hit_at(flags, 5),
        mrr_at_10=reciprocal_rank(flags, CUTOFF),
        ndcg_at_10=ndcg_at(flags, len(relevant), CUTOFF),
    )


def mean_scores(scores: Sequence[Scores]) -> Scores:
    """The figures averaged over questions (all 0.0 for none)."""
    n = len(scores)
    if n == 0:
        return Scores(0.0, 0.0, 0.0, 0.0)
    return Scores(
        hit_at_1=sum(s.hit_at_1 for s in scores) / n,
        hit_at_5=sum(s.hit_at_5 for s in scores) / n,
        mrr_at_10=sum(s.mrr_at_10 for s in scores) / n,
        ndcg_at_10=sum(s.ndcg_at_10 for s in scores) / n,
    )


def requirements_met(ranked_documents: Sequence[int], required: Sequence[set[int]]) -> int:
    """How many required documents (each a set: the documents its entry matches) have one
    among the first CUTOFF."""
    first = set(ranked_documents[:CUTOFF])
    return sum(1 for documents in required if documents & first)


def full_support(met: int, required: int) -> float:
    """1.0 when every one of `required` (at least one) is met, else 0.0."""
    return 1.0 if required and met >= required else 0.0


def partial_support(met: int, required: int) -> float:
    """The share of what is required that is met (0.0 when nothing is required)."""
    return met / required if required else 0.0


def score_support(ranked_documents: Sequence[int], required: Sequence[set[int]]) -> Support:
    """Full and partial support of one multi-hop question's document ranking."""
    met = requirements_met(ranked_documents, required)
    return Support(
        full_at_10=full_support(met, len(required)),
        partial_at_10=partial_support(met, len(required)),
    )


def mean_support(supports: Sequence[Support]) -> Support:
    """Support averaged over (multi-hop) questions (0.0 for none)."""
    n = len(supports)
    if n == 0:
        return Support(0.0, 0.0)
    return Support(
        full_at_10=sum(s.full_at_10 for s in supports) / n,
        partial_at_10=sum(s.partial_at_10 for s in supports) / n,
    )


# --- paired comparison --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """One ranking's per-question figures (reciprocal ranks, or full support) against a
    baseline's on the same questions: the mean difference, its bootstrap confidence
    interval, and how many questions it ranked better, alike or worse."""

    mean: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int

    @property
    def clear(self) -> bool:
        """A clear margin: the whole confidence interval above 0."""
        return self.ci_low > 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean_difference": round(self.mean, 4),
            "ci_low": round(self.ci_low, 4),
            "ci_high": round(self.ci_high, 4),
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "clear": self.clear,
        }


def reciprocal_rank_of(rank: int | None) -> float:
    """1 / rank for a first relevant document at `rank` (None: not found, 0.0)."""
    return 0.0 if rank is None else 1.0 / rank


def paired_difference(
    ranking: Sequence[float],
    baseline: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> PairedDifference:
    """`ranking` minus `baseline`, question by question (the same questions in the same
    order; any per-question figure: reciprocal ranks, or full support as 0 / 1): the mean,
    a percentile bootstrap interval of the mean at `confidence`, and wins / ties / losses.
    All 0 for no question."""
    if len(ranking) != len(baseline):
        raise ValueError("paired_difference: both rankings need the same questions.")
    differences = np.asarray(ranking, dtype=float) - np.asarray(baseline, dtype=float)
    if differences.size == 0:
        return PairedDifference(0.0, 0.0, 0.0, 0, 0, 0)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, differences.size, size=(resamples, differences.size))
    means = differences[picks].mean(axis=1)
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return PairedDifference(
        mean=float(differences.mean()),
        ci_low=float(low),
        ci_high=float(high),
        wins=int((differences > 0).sum()),
        ties=int((differences == 0).sum()),
        losses=int((differences < 0).sum()),
    )
