"""Read endpoints over the graph: entities, relations, neighbourhoods, paths, subgraphs,
hubs, stats and export. Registered on knowledge's router (knowledge/api.py), so a path
shared with a curation endpoint (GET and PATCH entities/{id}) is one route."""

from __future__ import annotations

from knowledge.api import router

__all__ = ["router"]
