"""What a match between an extracted name and an entity is, and the reasons that make it
review-only or vetoed: shared by the reads that find matches
(knowledge/selectors/matching.py) and the resolution that acts on them
(knowledge/actions/resolution.py). Pure: no database.
"""

from __future__ import annotations

from knowledge.consolidation import names
from knowledge.models import (
    Entity,
)

Key = tuple[str, int]  # (canonical key, entity type id)


TYPES_REASON = "same name, different types"


EMBEDDING_REASON = "embedding"


Match = tuple[Entity, names.Similarity]


# Reasons with which the spelling tier says "different" on purpose ("iPhone 14" / "iPhone
# 15", "Java" / "JavaScript", "Jr."): a close embedding does not overrule them.
VETOES = ("number differs", "number in one name only", "substring only", "qualifier in")


def vetoed(match: Match | None) -> bool:
    return match is not None and any(r.startswith(VETOES) for r in match[1].reasons)
