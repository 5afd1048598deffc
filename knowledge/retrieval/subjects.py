"""Which of a search's entities the question and its answer are about: those the Ask page
shows as chips and the ask API hands back with its passages.

A search's entities are everything that helped rank (recognised names, names close to the
question's vector, the graph's neighbours), and a recognised name can be a loose match of
one common word of the question: six spellings of it, none the thing asked about. A
reader's chips are the entities the question names (a whole name or alias, specific
enough to seed the graph: `EntityHit.named`) and those the first passages are about: a
passage mentions it, or its page's title names it.
"""

from __future__ import annotations

from knowledge.consolidation.keys import entity_key
from knowledge.retrieval.rerank import title_key
from knowledge.retrieval.types import EntityHit, SearchResult

# The first passages whose entities count as what the answer is about.
ABOUT_PASSAGES = 3


def question_subjects(result: SearchResult, passages: int = ABOUT_PASSAGES) -> list[EntityHit]:
    """The result's entities the question names or its first `passages` are about, in the
    result's order."""
    top = result.chunks[:passages]
    mentioned = {entity_id for chunk in top for entity_id in chunk.entity_ids}
    titles = {title_key(chunk.document_title) for chunk in top} - {None}
    return [
        entity
        for entity in result.entities
        if entity.named or entity.id in mentioned or _keys(entity) & titles
    ]


def _keys(entity: EntityHit) -> set[str | None]:
    return {entity_key(name, "") for name in (entity.name, *entity.aliases)}
