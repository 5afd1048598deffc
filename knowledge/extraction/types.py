"""What an extractor hands back for one window of text, whichever extractor it was.

Plain frozen dataclasses, no Django: the parser, the LLM extractor and the offline
extractor produce them in worker threads, and the actions turn them into rows.
Type names are normalised (lowercase snake_case) by the producer; `proposed_type` is set
when the model asked for a type outside the registry with the `NEW:` prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    name: str
    type: str
    description: str = ""
    proposed_type: bool = False
    # Offsets into the window text where the name occurs, when the extractor knows them
    # (the offline extractor does; for LLM output the actions search the window).
    spans: tuple[tuple[int, int], ...] = ()
    # The description is the name's own definition (a glossary or API entry's): the offline
    # extractor knows; an LLM's descriptions are its own reading, never marked.
    defines: bool = False


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    source: str
    target: str
    type: str
    description: str = ""
    keywords: tuple[str, ...] = ()
    strength: float = 5.0  # 1 to 10, as the prompt asks
    proposed_type: bool = False
    # Offsets into the window text of the evidence (a sentence), when known.
    span: tuple[int, int] | None = None


@dataclass(slots=True)
class ParseResult:
    """Everything usable in one model reply, plus an account of what was not.

    `counts` holds named tallies (lines, entities, relations, malformed, …) that are kept on
    the extraction run; `problems` holds a bounded sample of offending lines for a person to
    read; `done` is True when the reply said nothing more was left (gleaning stops).
    """

    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    done: bool = False

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n
