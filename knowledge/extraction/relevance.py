"""Is a document about its source's topic? The one decision of the relevance filter.

A source may carry a `topic` (words or a description of what it is about). A document is
on topic when the cosine similarity of its direction in the embedding space (the mean of
its first TOPIC_CHUNKS content chunks' unit vectors: what a page opens with says what it
is about, where a long page's tail wanders off to examples and footnotes) and the topic's
own embedding reaches the threshold (CRAWL_TOPIC_MIN_SIMILARITY, measured on real
manuals: bench/topic_filter.py). A document that is not is kept, searchable like any
other, but not extracted: it adds nothing to the graph.

Pure: the vectors come in (knowledge/actions/extraction/relevance.py reads them), a
verdict goes out. Nothing to judge by (no chunk vector, no topic vector) is on topic:
the filter never drops what it cannot measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# The content chunks (in reading order) whose mean direction stands for the document.
TOPIC_CHUNKS = 8


@dataclass(frozen=True, slots=True)
class Relevance:
    similarity: float | None  # None: not measured (nothing to judge by)
    on_topic: bool


NOT_MEASURED = Relevance(similarity=None, on_topic=True)


def document_direction(
    chunk_vectors: Sequence[Sequence[float]], *, first: int = TOPIC_CHUNKS
) -> np.ndarray | None:
    """The unit mean of the `first` vectors' unit directions, or None."""
    rows = [np.asarray(v, dtype=np.float64) for v in chunk_vectors[:first]]
    rows = [v / n for v in rows if (n := float(np.linalg.norm(v))) > 0]
    if not rows:
        return None
    mean = np.mean(rows, axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else None


def topic_similarity(
    chunk_vectors: Sequence[Sequence[float]],
    topic_vector: Sequence[float] | None,
    *,
    first: int = TOPIC_CHUNKS,
) -> float | None:
    """The cosine similarity of the document's direction (its `first` chunks) and the
    topic's vector."""
    direction = document_direction(chunk_vectors, first=first)
    if direction is None or topic_vector is None:
        return None
    topic = np.asarray(topic_vector, dtype=np.float64)
    norm = float(np.linalg.norm(topic))
    if norm == 0 or topic.shape != direction.shape:
        return None
    return round(float(direction @ (topic / norm)), 4)


def judge_relevance(
    chunk_vectors: Sequence[Sequence[float]],
    topic_vector: Sequence[float] | None,
    *,
    threshold: float,
) -> Relevance:
    """The decision: on topic when the similarity reaches `threshold` (or cannot be
    measured)."""
    similarity = topic_similarity(chunk_vectors, topic_vector)
    if similarity is None:
        return NOT_MEASURED
    return Relevance(similarity=similarity, on_topic=similarity >= threshold)
