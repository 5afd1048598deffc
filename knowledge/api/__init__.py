"""The knowledge app's part of the JSON API, assembled here from one router per subject.

`config/api.py` mounts `router`; nothing registers itself by being imported. Entities
(reads and curation share `entities/{id}`), the review queue, the schema registry,
extraction accounts, graph reads, relations (reads and curation share `relations/{id}`),
search, the quality report and the community map.
"""

from __future__ import annotations

from ninja import Router

from knowledge.api import (
    archive,
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
# The workspace archive (knowledge/api/archive.py). Its export shares the graph export's
# path, and one path is one router in ninja, so it joins the graph router. Its import
# (`archive_router`) is mounted by config/api.py ahead of the workspaces app, whose
# `/workspaces/{slug}` pattern would otherwise take `/workspaces/import`.
graph.router.add_api_operation(
    archive.EXPORT_PATH,
    ["POST"],
    archive.export_archive,
    summary=archive.EXPORT_SUMMARY,
    openapi_extra=archive.EXPORT_DOC,
)
archive_router = archive.router

__all__ = ["archive_router", "router"]
