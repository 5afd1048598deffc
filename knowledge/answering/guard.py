"""The guard that keeps the system prompts out of answers.

A document may ask the model to print its instructions, and a model may comply. Every
40-character stretch of the prompts' rules (case and spacing ignored) is a fingerprint;
an answer containing one is withheld whole. The answer stream holds back the end of what
has arrived while it could be the start of a rule (`PromptGuard.hold`), so no fingerprint
reaches a client, and ordinary text streams without delay. The sentences an answer may
legitimately repeat (the "not in the documents" reply) are not fingerprinted.
"""

from __future__ import annotations

from collections.abc import Iterable

from knowledge.answering.prompt import (
    MAP_SYSTEM_PROMPT,
    NOT_IN_DOCUMENTS,
    NOTHING_RELEVANT,
    SUMMARY_SYSTEM_PROMPT,
    SYSTEM_PROMPT,
)

SHINGLE_CHARS = 40


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _parts(prompts: Iterable[str]) -> tuple[str, ...]:
    """The prompts, normalised, less the sentences an answer may repeat."""
    allowed = [_normal(NOT_IN_DOCUMENTS), _normal(NOTHING_RELEVANT)]
    found: list[str] = []
    for prompt in prompts:
        parts = [_normal(prompt)]
        for phrase in allowed:
            parts = [piece for part in parts for piece in part.split(phrase)]
        found += [part for part in parts if part.strip()]
    return tuple(found)


_PARTS = _parts((SYSTEM_PROMPT, MAP_SYSTEM_PROMPT, SUMMARY_SYSTEM_PROMPT))
_FINGERPRINTS = frozenset(
    part[i : i + SHINGLE_CHARS] for part in _PARTS for i in range(len(part) - SHINGLE_CHARS + 1)
)


class PromptGuard:
    """Checks a growing text; each `leaks` call scans only what the previous ones did not."""

    def __init__(self) -> None:
        self._checked = 0

    def leaks(self, text: str) -> bool:
        normal = _normal(text)
        start = max(0, self._checked - SHINGLE_CHARS - 1)
        self._checked = len(normal)
        return any(
            normal[i : i + SHINGLE_CHARS] in _FINGERPRINTS
            for i in range(start, len(normal) - SHINGLE_CHARS + 1)
        )

    def hold(self, text: str) -> int:
        """How many characters at the end of `text` to hold back: the longest end (under
        SHINGLE_CHARS once normalised) found in a rule, which may be the start of a leak
        still arriving; 0 for ordinary text."""
        normal = _normal(text)
        for size in range(min(SHINGLE_CHARS - 1, len(normal)), 0, -1):
            end = normal[-size:]
            if any(end in part for part in _PARTS):
                return _raw_length(text, size)
        return len(text) - len(text.rstrip())


def _raw_length(text: str, size: int) -> int:
    """The characters at the end of `text` that normalise to `size` ones, and the
    whitespace after them."""
    body = text.rstrip()
    raw = size
    while raw < len(body) and len(_normal(body[-raw:])) < size:
        raw += 1
    return min(len(text), raw + len(text) - len(body))
