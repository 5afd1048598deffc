"""Structural checks on what a model extracted from one window, before anything is stored.

Why this exists: the parser (knowledge/extraction/parsing.py) reads whatever the model
wrote; it does not judge it. Models also write things that parse but are not entity names:
template leftovers ("{topic}", "entity_name"), list markers, URLs, markdown, pronouns,
whole sentences. `name_rejection_reason` catches those by shape alone (no schema, no
database), and `validate_window` applies it plus the per-window limits to a ParseResult.
Whether a relation's endpoints are among the window's entities is left to the caller,
which knows the entities already in the graph.

Counts added by `validate_window` (to those already on the result):
- rejected, and rejected_<reason> for each reason code below: entities dropped by name.
- entities_capped / relations_capped: items cut beyond max_entities / max_relations
  (EXTRACTION_MAX_*_PER_WINDOW), summed on the source's extraction account; the same
  numbers are also counted under their first names, over_entity_limit / over_relation_limit,
  which older runs carry alone.
- malformed: relations with an empty source or target.
- self_relation: relations whose source and target are the same name (casefolded).
- retyped_relations: relations whose type states nothing (a copula alone: "be", "is"),
  kept as `related_to`; empty_relation_type: such relations dropped because the window
  relates the same two names otherwise.
The "entities" and "relations" counts keep the parser's numbers (what the model gave).
"""

from __future__ import annotations

import re
from dataclasses import replace

from knowledge.extraction.parsing import note_problem
from knowledge.extraction.types import ExtractedEntity, ExtractedRelation, ParseResult

MAX_NAME_CHARS = 120
MAX_NAME_WORDS = 8

# Reason codes, in the order they are checked.
EMPTY = "empty"
NEWLINE = "newline"
TEMPLATE_ARTEFACT = "template_artefact"
URL = "url"
LIST_PREFIX = "list_prefix"
MARKDOWN = "markdown"
TOO_LONG = "too_long"
TOO_MANY_WORDS = "too_many_words"
NO_ALPHANUMERICS = "no_alphanumerics"
PRONOUN = "pronoun"
REASONS = (
    EMPTY,
    NEWLINE,
    TEMPLATE_ARTEFACT,
    URL,
    LIST_PREFIX,
    MARKDOWN,
    TOO_LONG,
    TOO_MANY_WORDS,
    NO_ALPHANUMERICS,
    PRONOUN,
)

# Newlines, tabs and other control characters, and the Unicode line/paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Pieces of the prompt or of an output template that leaked into a name.
_TEMPLATE_PIECES = (
    "{",
    "}",
    "<|",
    "|>",
    "confidence score:",
    "-brief:",
    "entity_name",
    "entity_type",
    "entity_description",
    "source_entity",
    "target_entity",
    "relationship_keywords",
    "relationship_strength",
    "<name>",
)
_TEMPLATE_NAMES = frozenset({"entity name", "name", "n/a", "null"})
# The lookbehinds make each pattern start only where a run starts, which keeps search linear.
_URL = re.compile(
    r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://|\bwww\.|(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]*[a-z]",
    re.IGNORECASE,
)
_LIST = re.compile(r"(?:\d{1,3}[.)]|[-*\u2022])\s")
_MARKDOWN = re.compile(r"\*\*|__|`|^#{1,6}(?:\s|$)|\[[^\[\]]*\]\([^()]*\)")
_PRONOUNS = frozenset(
    {
        "i",
        "me",
        "my",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "it",
        "its",
        "we",
        "us",
        "our",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "the",
        "a",
        "an",
    }
)


def name_rejection_reason(name: str) -> str | None:
    """Why `name` cannot be a new entity's name (a code from REASONS), or None if it can."""
    stripped = name.strip()
    if not stripped:
        return EMPTY
    if _CONTROL.search(stripped):
        return NEWLINE
    folded = stripped.casefold()
    if folded in _TEMPLATE_NAMES or any(piece in folded for piece in _TEMPLATE_PIECES):
        return TEMPLATE_ARTEFACT
    if _URL.search(stripped):
        return URL
    if _LIST.match(stripped):
        return LIST_PREFIX
    if _MARKDOWN.search(stripped):
        return MARKDOWN
    if len(stripped) > MAX_NAME_CHARS:
        return TOO_LONG
    if len(stripped.split()) > MAX_NAME_WORDS:
        return TOO_MANY_WORDS
    if not any(ch.isalnum() for ch in stripped):
        return NO_ALPHANUMERICS
    if folded in _PRONOUNS:
        return PRONOUN
    return None


RELATED_TYPE = "related_to"
# Types that state no relation, whoever wrote them: a copula or an auxiliary alone. "X is
# Y" says what X is; as an edge it joined a product to every noun of its first sentence.
_EMPTY_RELATION_TYPES = frozenset(
    {"be", "is", "are", "was", "were", "been", "being", "am", "become", "becomes", "seem",
     "seems", "do", "does", "did", "has_been"}
)  # fmt: skip


def relation_type_states_something(type_name: str) -> bool:
    """The sanity check every relation type passes (a known type always does): not empty,
    not a copula or auxiliary alone."""
    folded = type_name.strip().casefold()
    return bool(folded) and folded not in _EMPTY_RELATION_TYPES


def _sane_types(relations: list[ExtractedRelation], out: ParseResult) -> list[ExtractedRelation]:
    """Relations whose type fails the sanity check become `related_to`, unless the window
    relates the two names otherwise (then they add nothing and are dropped)."""
    stated = {
        frozenset((r.source.strip().casefold(), r.target.strip().casefold()))
        for r in relations
        if relation_type_states_something(r.type)
    }
    sane: list[ExtractedRelation] = []
    for relation in relations:
        if relation_type_states_something(relation.type):
            sane.append(relation)
            continue
        pair = frozenset((relation.source.strip().casefold(), relation.target.strip().casefold()))
        if pair in stated:
            out.count("empty_relation_type")
            continue
        stated.add(pair)
        out.count("retyped_relations")
        sane.append(replace(relation, type=RELATED_TYPE, keywords=(), proposed_type=False))
    return sane


def validate_window(result: ParseResult, *, max_entities: int, max_relations: int) -> ParseResult:
    """A new ParseResult without badly named entities, self-relations and items over limits.

    Entities are checked in order, so the limit keeps the first acceptable ones; the same
    for relations. Relations whose endpoints are not among the entities are kept.
    """
    out = ParseResult(counts=dict(result.counts), problems=list(result.problems), done=result.done)
    entities: list[ExtractedEntity] = []
    for entity in result.entities:
        reason = name_rejection_reason(entity.name)
        if reason is not None:
            out.count("rejected")
            out.count(f"rejected_{reason}")
            note_problem(out, f"rejected_{reason}", entity.name)
        elif len(entities) >= max_entities:
            out.count("entities_capped")
            out.count("over_entity_limit")
        else:
            entities.append(entity)

    relations: list[ExtractedRelation] = []
    for relation in _sane_types(result.relations, out):
        source, target = relation.source.strip(), relation.target.strip()
        if not source or not target:
            out.count("malformed")
            note_problem(out, "malformed", f"{relation.source!r} -> {relation.target!r}")
        elif source.casefold() == target.casefold():
            out.count("self_relation")
        elif len(relations) >= max_relations:
            out.count("relations_capped")
            out.count("over_relation_limit")
        else:
            relations.append(relation)

    out.entities = entities
    out.relations = relations
    return out
