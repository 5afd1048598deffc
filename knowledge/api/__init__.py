"""The knowledge app's part of the JSON API, assembled here from one router per subject.

`config/api.py` mounts `router`; nothing registers itself by being imported. Entities
(reads and curation share `entities/{id}`), the review queue, the schema registry,
extraction accounts, graph reads, relations (reads and curation share `relations/{id}`),
search, the quality report and the community map.
"""

from __future__ import annotations

from ninja import Router

from knowledge.api import (
    ask,
    community_map,
    entities,
    extraction,
    graph,
    quality,
    relations,
    search,
    suggestions,
    types,
)

router = Router()
for part in (types, extraction, entities, suggestions, graph, relations, search, quality, ask):
    router.add_router("", part.router)
router.add_router("", community_map.router)

__all__ = ["router"]
