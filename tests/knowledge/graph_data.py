"""Graphs written straight into the real tables, for tests that need many rows, exact
names (hostile ones too) or old timestamps without running extraction over text.

Every row is what the pipeline would write: a source, a document whose text holds each
entity's name, one chunk covering it, an extraction run, and a mention per entity and an
evidence row per relation pointing at the exact characters. Derived fields (mention
counts, evidence counts, weights, sources, first/last seen) are set as consolidation
would set them for that evidence.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field

from django.utils import timezone

from ingest.models import Chunk, Document, DocumentStatus, Source, SourceKind, SourceStatus
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.consolidation.keys import entity_key
from knowledge.models import (
    Entity,
    EntityType,
    ExtractionRun,
    Mention,
    Relation,
    RelationEvidence,
    RelationType,
)
from workspaces.models import Workspace


@dataclass
class Built:
    source: Source
    document: Document
    chunk: Chunk
    run: ExtractionRun
    entities: dict[str, Entity] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_graph(
    workspace: Workspace,
    *,
    entities: dict[str, str],
    relations: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
    title: str = "Fixture notes",
    path: str = "notes.txt",
) -> Built:
    """`entities`: name -> type; `relations`: (source name, target name, type)."""
    do_ensure_default_schema(workspace=workspace)
    lines = [f"{name} appears here." for name in entities]
    lines += [f"{s} {kind} {t}." for s, t, kind in relations]
    text = "\n".join(lines)
    source = Source.objects.create(
        workspace=workspace, kind=SourceKind.TEXT, name=title, status=SourceStatus.DONE
    )
    document = Document.objects.create(
        workspace=workspace,
        source=source,
        path=path,
        title=title,
        text=text,
        status=DocumentStatus.DONE,
        content_hash=_sha(text),
    )
    chunk = Chunk.objects.create(
        workspace=workspace,
        document=document,
        ordinal=0,
        text=text,
        char_start=0,
        char_end=len(text),
        token_count=len(text.split()),
        content_hash=_sha(text),
    )
    run = ExtractionRun.objects.create(
        workspace=workspace,
        window_hash=_sha(text),
        prompt_version="fixture",
        model="fixture",
        schema_hash="fixture",
        extractor="offline",
    )
    built = Built(source=source, document=document, chunk=chunk, run=run)
    now = timezone.now()
    keys: set[tuple[str, str]] = set()
    for name, type_name in entities.items():
        entity_type, _ = EntityType.objects.get_or_create(workspace=workspace, name=type_name)
        key = entity_key(name, type_name) or name.lower()
        while (type_name, key) in keys:  # hostile names may fold to one key: keep them apart
            key += "'"
        keys.add((type_name, key))
        entity = Entity.objects.create(
            workspace=workspace,
            name=name,
            canonical_name=key,
            type=entity_type,
            type_votes={type_name: 1},
            mention_count=1,
            source_ids=[source.pk],
            first_seen_at=now,
            last_seen_at=now,
            description=f"{name} as described in the text.",
        )
        start = text.find(f"{name} appears here.")
        Mention.objects.create(
            workspace=workspace,
            entity=entity,
            chunk=chunk,
            run=run,
            surface_form=name,
            extracted_type=type_name,
            char_start=start,
            char_end=start + len(name),
            description=f"{name} as described in the text.",
        )
        built.entities[name] = entity
    for s, t, kind in relations:
        relation_type, _ = RelationType.objects.get_or_create(workspace=workspace, name=kind)
        relation = Relation.objects.create(
            workspace=workspace,
            source=built.entities[s],
            target=built.entities[t],
            type=relation_type,
            description=f"{s} {kind} {t}.",
            keywords=[kind],
            weight=0.8,
            evidence_count=1,
        )
        sentence = f"{s} {kind} {t}."
        start = text.find(sentence)
        RelationEvidence.objects.create(
            workspace=workspace,
            relation=relation,
            chunk=chunk,
            run=run,
            char_start=start,
            char_end=start + len(sentence),
            description=sentence,
            keywords=[kind],
            strength=8.0,
        )
        built.relations.append(relation)
    return built


def chain(workspace: Workspace, count: int, *, prefix: str = "Node") -> Built:
    """`count` entities in a line, each related to the next (a path of count - 1 edges)."""
    names = {f"{prefix} {i:03d}": "concept" for i in range(count)}
    order = list(names)
    edges = [(a, b, "related_to") for a, b in itertools.pairwise(order)]
    return make_graph(workspace, entities=names, relations=edges, title=f"{prefix} chain")


def make_lab_graph(workspace: Workspace) -> Built:
    """A small graph the explorer and bulk-graph suites share: Ada works for Acme, Acme is in
    Paris, and Loner has no relation."""
    return make_graph(
        workspace,
        entities={"Ada": "person", "Acme": "organization", "Paris": "location", "Loner": "concept"},
        relations=[("Ada", "Acme", "works_for"), ("Acme", "Paris", "located_in")],
    )


def mention_again(built: Built, entity: Entity, times: int, *, chunk: Chunk | None = None) -> None:
    """`times` more mentions of `entity` in `chunk` (the built one by default): what a name
    named again and again in a source's documents leaves behind."""
    chunk = chunk or built.chunk
    taken = Mention.objects.filter(chunk=chunk, entity=entity).count()
    Mention.objects.bulk_create(
        Mention(
            workspace=entity.workspace, entity=entity, chunk=chunk, run=built.run,
            surface_form=entity.name, extracted_type=entity.type.name,
            char_start=10_000 + taken + i, char_end=10_000 + taken + i + len(entity.name),
        )
        for i in range(times)
    )  # fmt: skip


def evidence_again(built: Built, relation: Relation, times: int) -> None:
    """`times` more evidence rows of `relation` in the built chunk."""
    taken = RelationEvidence.objects.filter(chunk=built.chunk, relation=relation).count()
    RelationEvidence.objects.bulk_create(
        RelationEvidence(
            workspace=relation.workspace, relation=relation, chunk=built.chunk, run=built.run,
            char_start=10_000 + taken + i, char_end=10_001 + taken + i, strength=5.0,
        )
        for i in range(times)
    )  # fmt: skip
