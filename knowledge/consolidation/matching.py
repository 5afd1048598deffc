"""What a match between an extracted name and an entity is, and the reasons that make it
review-only or vetoed: shared by the reads that find matches
(knowledge/selectors/matching.py) and the resolution that acts on them
(knowledge/actions/resolution.py). Pure: no database.
"""

from __future__ import annotations

from collections.abc import Iterable

from knowledge.consolidation.decide import Decision
from knowledge.consolidation.names.normalise import same_spelling
from knowledge.models import (
    Entity,
    EntityState,
)

Key = tuple[str, int]  # (canonical key, entity type id)


TYPES_REASON = "same name, different types"

# The reason an entity of the fallback type joins one of another type (`untyped_twin`).
UNTYPED_REASON = "same name, one of them of the fallback type"


EMBEDDING_REASON = "embedding"


# The entity a name matched, how alike they are, and the rule that said so.
Match = Decision[Entity]


# Reasons with which the spelling tier says "different" on purpose ("iPhone 14" / "iPhone
# 15", "Java" / "JavaScript", "Jr."): a close embedding does not overrule them.
VETOES = ("number differs", "number in one name only", "substring only", "qualifier in")


def vetoed(match: Match | None) -> bool:
    return match is not None and any(r.startswith(VETOES) for r in match.similarity.reasons)


def untyped_twin(
    name: str, type_name: str, others: Iterable[Entity], *, fallback: str
) -> Entity | None:
    """The entity a name joins across types, because one side's type says nothing.

    The fallback type (`fallback`, "concept") is what an extractor answers when it cannot
    tell a name's type (the offline extractor's heuristics, or an LLM's vaguest choice), so
    "FileHandler" typed `concept` in one sentence and `technology` in the next is one thing
    typed two ways. On the Python manual, 930 of the 948 names held by entities of several
    types had a `concept` among them, and 48 of a labelled 60 were one thing
    (bench/data/python-docs-homonyms.jsonl). Only names spelled alike join
    (`same_spelling`): the 12 others were nearly all code names that differ in case.

    `others` are the active entities of the name's canonical key in other types. A name of
    the fallback type joins the one spelled alike with the most mentions; a typed name
    joins the fallback-typed entity spelled alike when that is the name's only entity and
    no name of a third type joined it before.
    The joined entity's type then follows the majority of its evidence, as always."""
    active = [e for e in others if e.state == EntityState.ACTIVE]
    alike = [e for e in active if same_spelling(e.name, name)]
    if type_name == fallback:
        return max(alike, key=lambda e: (e.mention_count, -e.pk), default=None)
    if len(active) != 1 or not alike or alike[0].type.name != fallback:
        return None
    # An untyped entity that names of another type joined already may be a homonym's:
    # Paris the city joined it, Paris the person is asked about instead.
    voted = set(alike[0].type_votes or {}) - {fallback, type_name}
    return None if voted else alike[0]
