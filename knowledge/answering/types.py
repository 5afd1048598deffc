"""What an answer is made of; plain dataclasses shared by the prompt, the citation check,
the action that asks and the JSON every caller prints (payload.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class PassageBlock:
    """A piece of a passage as a person reads it (readable.py): code, or prose without the
    parsers' Markdown marks."""

    code: bool
    text: str


@dataclass(frozen=True, slots=True)
class Passage:
    """A retrieved chunk as the prompt numbers it (`n`, from 1); `text` as stored (what the
    prompt quotes), `blocks` as the page shows it."""

    n: int
    chunk_id: int
    document_id: int
    document_title: str
    source_id: int
    url: str | None
    path: str
    char_start: int
    char_end: int
    text: str
    score: float
    blocks: tuple[PassageBlock, ...] = ()
    # The document's own date (ISO 8601), when it has one.
    published_at: str | None = None


@dataclass(frozen=True, slots=True)
class Citation:
    """A validated [n]: the passage's chunk and the span of the document it rests on (the
    chunk's sentence that best matches the claim when it can be told, else the chunk)."""

    n: int
    chunk_id: int
    document_id: int
    document_title: str
    source_id: int
    char_start: int
    char_end: int


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


@dataclass(slots=True)
class Answer:
    """One ask's outcome; `payload.answer_payload` is its JSON."""

    question: str
    mode: str
    llm_configured: bool
    answered: bool = False
    answer: str | None = None
    citations: list[Citation] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    entities: list[dict[str, object]] = field(default_factory=list)
    relations: list[dict[str, object]] = field(default_factory=list)
    usage: Usage | None = None
    warnings: list[str] = field(default_factory=list)
