"""The small world the curation tests ingest (two organisations, their founders, a town)
through the scripted LLM, and the readers they compare rows with."""

from __future__ import annotations

from typing import Any

from knowledge.models import Alias, Entity, Mention, Relation, RelationEvidence
from tests.knowledge.conftest import World

WORLD = World(
    entities={
        "Google": "organization",
        "Alphabet": "organization",
        "Larry Page": "person",
        "Sergey Brin": "person",
        "Mountain View": "location",
    },
    relations=[
        ("Larry Page", "Google", "works_for"),
        ("Larry Page", "Alphabet", "works_for"),
        ("Google", "Alphabet", "part_of"),
        ("Sergey Brin", "Google", "works_for"),
        ("Google", "Mountain View", "located_in"),
        ("Alphabet", "Mountain View", "located_in"),
    ],
)
FIRST = (
    "Larry Page and Sergey Brin founded Google in Mountain View. Google later became part of "
    "Alphabet, which Larry Page led; Alphabet is also in Mountain View."
)
SECOND = "Google opened another office in Mountain View, and Sergey Brin spoke there."


def entity(name: str) -> Entity:
    return Entity.objects.get(name=name)


def graph(workspace) -> dict[str, Any]:
    """Everything an unmerge must restore, by id."""
    return {
        "entities": {
            e.pk: (e.name, e.canonical_name, e.type_id, e.state, e.merged_into_id,
                   e.mention_count, e.description, tuple(e.aliases))
            for e in Entity.objects.for_workspace(workspace)
        },
        "aliases": sorted(
            Alias.objects.for_workspace(workspace).values_list("entity_id", "canonical")
        ),
        "mentions": dict(Mention.objects.for_workspace(workspace).values_list("pk", "entity_id")),
        "relations": {
            r.pk: (r.source_id, r.target_id, r.type_id, r.state, r.merged_into_id,
                   round(r.weight, 6), r.evidence_count)
            for r in Relation.objects.for_workspace(workspace)
        },
        "evidence": dict(
            RelationEvidence.objects.for_workspace(workspace).values_list("pk", "relation_id")
        ),
    }  # fmt: skip
