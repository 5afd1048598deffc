"""Embedding ahead: chunk vectors computed on a background thread while the worker's main
thread parses, chunks, extracts and writes the documents of the same group.

Why: on a 2-core worker the model keeps both cores busy while it runs, and everything else
the pipeline does (parsing, spaCy, consolidation's queries, the writes) keeps about one.
Run one after the other, each leaves capacity unused; run side by side they share the
cores. Measured with spaCy on 250 chunks of the Python manual and the model on 256 others:
4.7 s and 7.9 s alone, 10.3 s side by side (spaCy itself 12 % slower).

One lane per process: one thread with its own copy of the model (`Embedder.twin`), so the
main thread's copy keeps embedding entity names and queries without waiting behind a
document's batch. The lane only computes: every write stays on the main thread, in the
stage that owns it. A document's chunks go as jobs of at most JOB_TEXTS texts (in order of
length, as the model pads a batch to its longest), so a stopping worker waits for one job
(a second or two) at most, and each job checks for a shutdown before it starts.

A chunk goes as its indexed text (its document's title and heading path, then its text:
ingest/indexed_text.py), and its vector is matched to it by id *and* the hash of that text
when it is used: a document chunked again (or retitled) meanwhile gets vectors for its
current chunks only (the rest are computed as usual). The lane holds at most `keep`
documents; an older entry is dropped (its jobs cancelled when not started), and its stage
computes the vectors itself.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from itertools import batched

from django.conf import settings

from ingest.embeddings import Embedder, EmbeddingUnavailable, TokenCounter, get_embedder
from system import slices

logger = logging.getLogger(__name__)

JOB_TEXTS = 32  # texts per job: ~1.5 s of the model on 2 cores
WAIT_STEP = 0.5  # seconds between checks (a checkpoint) while waiting for a job


@dataclass(frozen=True, slots=True)
class AheadChunk:
    """A chunk sent ahead: its id, the hash of the text its vector is computed from (its
    indexed text, `IndexedText.key`), and that text."""

    id: int
    content_hash: str
    text: str


@dataclass(frozen=True, slots=True)
class _Job:
    chunks: tuple[tuple[int, str], ...]  # (chunk id, content hash) in the job's order
    future: Future[list[list[float]]]


class EmbeddingLane:
    """Background embedding of documents' chunks, keyed by document id."""

    def __init__(self, embedder: Embedder, *, keep: int, twin_of: Embedder | None = None) -> None:
        self._embedder = embedder
        self.twin_of = twin_of  # the embedder this lane's model was copied from
        self._keep = keep
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-ahead")
        self._documents: OrderedDict[int, list[_Job]] = OrderedDict()
        self._lock = threading.Lock()
        # Instrumentation: texts this lane has encoded (tests and benchmarks read it).
        self.texts_done = 0

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    @property
    def counter(self) -> TokenCounter:
        return self._embedder.counter

    @property
    def chunk_token_budget(self) -> int:
        return self._embedder.chunk_token_budget

    def send(self, document_id: int, chunks: Sequence[AheadChunk]) -> bool:
        """Queue a document's chunks; False (nothing queued) when it is queued already."""
        ordered = sorted(chunks, key=lambda c: (len(c.text), c.id))
        with self._lock:
            if document_id in self._documents:
                return False
            self._documents[document_id] = [
                _Job(
                    chunks=tuple((c.id, c.content_hash) for c in part),
                    future=self._executor.submit(self._encode, [c.text for c in part]),
                )
                for part in batched(ordered, JOB_TEXTS)
            ]
            while len(self._documents) > self._keep:
                _, dropped = self._documents.popitem(last=False)
                _cancel(dropped)
        return True

    def holds(self, document_id: int) -> bool:
        """Whether the document was sent and not forgotten since."""
        with self._lock:
            return document_id in self._documents

    def vectors(
        self, document_id: int, chunks: Sequence[tuple[int, str]], *, wait: Callable[[], None]
    ) -> dict[int, list[float]]:
        """{chunk id: vector} for those of `chunks` ((id, content hash) pairs) sent ahead with
        the same content hash, waiting for the jobs that hold them and calling `wait` (a
        checkpoint, which may end the slice) every WAIT_STEP seconds meanwhile. A job that
        has not started is cancelled instead (the lane is behind: the caller's thread is
        better used computing it than waiting), and one that failed gives nothing: the
        caller computes what is missing."""
        wanted = dict(chunks)
        with self._lock:
            jobs = [
                job
                for job in self._documents.get(document_id, ())
                if any(wanted.get(chunk_id) == digest for chunk_id, digest in job.chunks)
            ]
        # Not started now: the caller computes them rather than wait for the lane to.
        jobs = [job for job in jobs if not job.future.cancel()]
        found: dict[int, list[float]] = {}
        for job in jobs:
            computed = _result(job.future, wait)
            if computed is None:
                continue
            for (chunk_id, digest), vector in zip(job.chunks, computed, strict=True):
                if wanted.get(chunk_id) == digest:
                    found[chunk_id] = vector
        return found

    def forget(self, document_ids: Sequence[int]) -> None:
        """Drop these documents' entries, cancelling their jobs that have not started
        (their source was cancelled, or their vectors are stored)."""
        with self._lock:
            dropped = [self._documents.pop(d) for d in document_ids if d in self._documents]
        for jobs in dropped:
            _cancel(jobs)

    def close(self) -> None:
        """Cancel what has not started and wait for the job in flight (a worker's stop)."""
        with self._lock:
            dropped = list(self._documents.values())
            self._documents.clear()
        for jobs in dropped:
            _cancel(jobs)
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if slices.shutdown_requested():
            raise CancelledError("the worker is stopping")
        vectors = self._embedder.encode(texts)
        self.texts_done += len(texts)  # only this thread writes it
        return vectors


def _cancel(jobs: list[_Job]) -> None:
    for job in jobs:
        job.future.cancel()


def _result(
    future: Future[list[list[float]]], wait: Callable[[], None]
) -> list[list[float]] | None:
    while True:
        try:
            return future.result(timeout=WAIT_STEP)
        except FutureTimeout:
            wait()
        except CancelledError:
            return None
        except Exception:
            logger.exception("Embedding ahead failed; the stage computes these vectors itself")
            return None


_lane: EmbeddingLane | None = None
_lane_lock = threading.Lock()


def get_lane() -> EmbeddingLane | None:
    """The process's lane for the current model; None when INGEST_EMBED_AHEAD is off or no
    model loads (the embed stage then says why, as before). Made on first use: a process
    that never runs a group of documents (web, a single upload inline) never copies the
    model."""
    global _lane
    if not settings.INGEST_EMBED_AHEAD:
        return None
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable:
        return None
    with _lane_lock:
        if _lane is None or _lane.twin_of is not embedder:  # the model was (re)loaded
            if _lane is not None:
                _lane.close()
            _lane = EmbeddingLane(
                embedder.twin(), keep=2 * settings.INGEST_DOCUMENTS_PER_TASK, twin_of=embedder
            )
        return _lane


def lane_of(embedder: Embedder) -> EmbeddingLane | None:
    """The lane copied from `embedder`, if one was made (by a group's documents being sent
    ahead), without making one: a document processed alone never copies the model."""
    lane = _lane
    return lane if lane is not None and lane.twin_of is embedder else None


def forget_sent_ahead(document_ids: Sequence[int]) -> None:
    """Stop embedding these documents ahead (their source was cancelled): their jobs that
    have not started are cancelled, without loading a model to do it."""
    if _lane is not None:
        _lane.forget(document_ids)
