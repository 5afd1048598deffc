"""The tools agents call, one module per subject, assembled here explicitly (nothing
registers itself by being imported): search (search, ask), entities (get_entity,
list_entities), graph (neighborhood, find_path, graph_stats), sources (list_sources,
source_status, add_text, add_url, crawl), curation (merge_entities, unmerge) and
relations (add_relation, update_relation, delete_relation, reverse_relation,
undo_relation_change)."""

from __future__ import annotations

from agents.tools import curation, entities, graph, relations, search, sources
from agents.tools.base import ToolSpec

TOOLS: dict[str, ToolSpec] = {
    tool.name: tool
    for tool in [
        *search.TOOLS,
        *entities.TOOLS,
        *graph.TOOLS,
        *sources.TOOLS,
        *curation.TOOLS,
        *relations.TOOLS,
    ]
}


def available_tools() -> list[ToolSpec]:
    """The tools this server offers now (`ask` only with an LLM configured)."""
    return [tool for tool in TOOLS.values() if tool.available()]
