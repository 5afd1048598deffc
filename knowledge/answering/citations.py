"""Citation markers in an answer: [n] and [n, m] found, checked against the passages the
prompt held (a number the prompt never showed is dropped, with a warning), and mapped to
the evidence span they rest on.

`AnswerStream` does it on a reply as it arrives, so the stream can show each citation
as soon as its marker is complete; a whole reply is the same stream fed once, so the
streamed and the JSON answers cannot differ. It also runs the system prompt guard
(guard.py) before any text leaves it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from knowledge.answering.guard import PromptGuard
from knowledge.answering.prompt import NOT_IN_DOCUMENTS
from knowledge.answering.types import Citation, Passage

MARKER = re.compile(r"(\s*)\[(\s*\d{1,4}\s*(?:,\s*\d{1,4}\s*)*)\]")
# An opening bracket this close to the end may be a marker still arriving.
MARKER_MAX_CHARS = 32
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_WORD = re.compile(r"\w{3,}")

WITHHELD = "The answer was withheld because it repeated the assistant's instructions."


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def narrow_span(passage: Passage, claim: str) -> tuple[int, int]:
    """The document span of the passage's sentence sharing most words with `claim`; the
    whole chunk when none does or when the passage text is not the chunk's exact text
    (bounded for display), since offsets would then be wrong."""
    if len(passage.text) != passage.char_end - passage.char_start:
        return passage.char_start, passage.char_end
    wanted = _words(claim)
    best, best_score = None, 0
    for match in _SENTENCE.finditer(passage.text):
        score = len(wanted & _words(match.group()))
        if score > best_score:
            best, best_score = match, score
    if best is None:
        return passage.char_start, passage.char_end
    text = best.group()
    start = best.start() + (len(text) - len(text.lstrip()))
    end = best.start() + len(text.rstrip())
    return passage.char_start + start, passage.char_start + end


def _last_sentence(text: str) -> str:
    found = [m.group() for m in _SENTENCE.finditer(text) if m.group().strip()]
    return found[-1] if found else text


@dataclass(slots=True)
class Outcome:
    answered: bool
    answer: str
    citations: list[Citation]
    warnings: list[str]


@dataclass(slots=True)
class AnswerStream:
    """Feed the reply's pieces; get ("delta", {"text"}) and ("citation", {...}) events."""

    passages: Sequence[Passage]
    guard: PromptGuard = field(default_factory=PromptGuard)
    raw: str = ""
    emitted_upto: int = 0  # of `raw`, passed the guard and handled
    pending: str = ""  # passed the guard, held back as a possible marker start
    text: str = ""  # the answer as emitted
    citations: list[Citation] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    leaked: bool = False

    def feed(self, piece: str) -> list[tuple[str, dict[str, object]]]:
        if self.leaked:
            return []
        self.raw += piece
        if self.guard.leaks(self.raw):
            self.leaked = True
            return []
        ready = max(self.emitted_upto, len(self.raw) - self.guard.hold(self.raw))
        return self._advance(ready, final=False)

    def finish(self) -> list[tuple[str, dict[str, object]]]:
        if self.leaked:
            return []
        return self._advance(len(self.raw), final=True)

    def _advance(self, ready: int, *, final: bool) -> list[tuple[str, dict[str, object]]]:
        self.pending += self.raw[self.emitted_upto : ready]
        self.emitted_upto = ready
        out_part = self.pending
        if not final:
            cut = self.pending.rfind("[")
            tail = self.pending[cut:] if cut >= 0 else ""
            if tail and "]" not in tail and len(tail) < MARKER_MAX_CHARS:
                out_part = self.pending[:cut]
            out_part = out_part.rstrip()
        self.pending = self.pending[len(out_part) :]
        return self._emit(out_part)

    def _emit(self, part: str) -> list[tuple[str, dict[str, object]]]:
        if not part:
            return []
        events: list[tuple[str, dict[str, object]]] = []
        pieces: list[str] = []
        last = 0
        for match in MARKER.finditer(part):
            pieces.append(part[last : match.start()])
            claim = _last_sentence(self.text + "".join(pieces))
            kept = self._check(match.group(2), claim, events)
            if kept:
                pieces.append(f"{match.group(1)}[{', '.join(str(n) for n in kept)}]")
            last = match.end()
        pieces.append(part[last:])
        text = "".join(pieces)
        self.text += text
        if text:
            events.insert(0, ("delta", {"text": text}))
        return events

    def _check(
        self, numbers: str, claim: str, events: list[tuple[str, dict[str, object]]]
    ) -> list[int]:
        by_n = {p.n: p for p in self.passages}
        kept: list[int] = []
        for token in numbers.split(","):
            n = int(token)
            passage = by_n.get(n)
            if passage is None:
                if n not in self.dropped:
                    self.dropped.append(n)
                continue
            if n not in kept:
                kept.append(n)
            if all(c.n != n for c in self.citations):
                start, end = narrow_span(passage, claim)
                citation = Citation(
                    n=n,
                    chunk_id=passage.chunk_id,
                    document_id=passage.document_id,
                    document_title=passage.document_title,
                    source_id=passage.source_id,
                    char_start=start,
                    char_end=end,
                )
                self.citations.append(citation)
                events.append(("citation", _citation_dict(citation)))
        return kept

    def outcome(self) -> Outcome:
        """The answer as the API returns it (after `finish`)."""
        warnings = [f"Citation [{n}] refers to no passage and was dropped." for n in self.dropped]
        text = self.text.strip()
        if self.leaked:
            warnings.append("The model's answer repeated its instructions; it is not shown.")
            return Outcome(False, WITHHELD, [], warnings)
        if not self.citations:
            if text and NOT_IN_DOCUMENTS.lower().rstrip(".") not in text.lower():
                warnings.append("The model's answer cited none of the passages; it is not shown.")
            return Outcome(False, NOT_IN_DOCUMENTS, [], warnings)
        return Outcome(True, text, list(self.citations), warnings)


def _citation_dict(citation: Citation) -> dict[str, object]:
    return {
        "n": citation.n,
        "chunk_id": citation.chunk_id,
        "document_id": citation.document_id,
        "document_title": citation.document_title,
        "source_id": citation.source_id,
        "char_start": citation.char_start,
        "char_end": citation.char_end,
    }


def validate_answer(text: str, passages: Sequence[Passage]) -> tuple[AnswerStream, Outcome]:
    """A whole reply checked at once (the same stream, fed once)."""
    stream = AnswerStream(passages)
    stream.feed(text)
    stream.finish()
    return stream, stream.outcome()
