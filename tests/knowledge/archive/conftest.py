"""A curated workspace built through the real pipeline, and its content with every id
replaced by what the row is (names, types, text), so two workspaces compare equal exactly
when an import kept everything and pointed every reference at the right row."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from ingest.actions.sources import do_create_upload_source
from ingest.models import Chunk, Document, Source
from knowledge.actions.curation.entities import do_add_alias
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.actions.curation.relations import do_delete_relation
from knowledge.archive.payloads import PayloadRemapper
from knowledge.models import (
    Alias,
    CurationEvent,
    CurationRule,
    Entity,
    EntityType,
    Mention,
    MergeSuggestion,
    Relation,
    RelationEvidence,
    RelationRule,
    RelationType,
)
from tests.knowledge.conftest import World
from tests.support import run_pending
from workspaces.models import Workspace

WORLD = World(
    entities={
        "Ada Lovelace": "person",
        "Augusta Ada King": "person",
        "Charles Babbage": "person",
        "Analytical Engine": "product",
        "London": "location",
    },
    relations=[
        ("Analytical Engine", "Charles Babbage", "created_by"),
        ("Ada Lovelace", "Charles Babbage", "works_for"),
        ("Augusta Ada King", "London", "located_in"),
        ("Ada Lovelace", "London", "located_in"),
    ],
)
TEXT = (
    b"# Notes\n\nCharles Babbage designed the Analytical Engine. Ada Lovelace worked with "
    b"Charles Babbage in London.\n\nAugusta Ada King lived in London and wrote about the "
    b"Analytical Engine.\n"
)


@dataclass
class Curated:
    workspace: Workspace
    source: Source
    merge: CurationEvent
    deletion: CurationEvent
    alias: CurationEvent


def entity(workspace: Workspace, name: str) -> Entity:
    return Entity.objects.get(workspace=workspace, name=name, state="active")


@pytest.fixture
def curated(alice, llm) -> Curated:
    """alice's workspace: an uploaded file (stored blob) extracted by a scripted model,
    then a merge, a deleted relation (a suppress rule) and a manual alias (a pin rule)."""
    llm.responder = WORLD
    workspace = alice.workspace
    source, _ = do_create_upload_source(
        workspace=workspace, files=[("notes.md", [TEXT])], name="Notes", created_by=alice.user
    )
    run_pending(source)
    merge = do_merge_entities(
        workspace=workspace,
        survivor_id=entity(workspace, "Ada Lovelace").pk,
        merged_ids=[entity(workspace, "Augusta Ada King").pk],
        actor=alice.user,
    )
    works_for = Relation.objects.get(workspace=workspace, type__name="works_for", state="active")
    deletion = do_delete_relation(workspace=workspace, relation_id=works_for.pk, actor=alice.user)
    alias = do_add_alias(
        workspace=workspace,
        entity_id=entity(workspace, "Charles Babbage").pk,
        name="Babbage",
        actor=alice.user,
    )
    return Curated(workspace, source, merge, deletion, alias)


# --- what a workspace holds, ids replaced ---------------------------------------------------


def natural_keys(workspace: Workspace) -> dict[str, dict[int, Any]]:
    """For each table that ids point into: id -> what the row is."""
    entities = {
        e.pk: (e.name, e.type.name)
        for e in Entity.objects.for_workspace(workspace).select_related("type")
    }
    relations = {
        r.pk: (entities[r.source_id], entities[r.target_id], r.type.name)
        for r in Relation.objects.for_workspace(workspace).select_related("type")
    }
    # Summaries may quote ids ("Undid merge 12"): they differ between workspaces.
    events = {
        e.pk: (e.action, re.sub(r"\d+", "#", e.summary))
        for e in CurationEvent.objects.for_workspace(workspace)
    }
    chunks = {
        c.pk: (c.document.path, c.ordinal)
        for c in Chunk.objects.for_workspace(workspace).select_related("document")
    }
    return {
        "knowledge.Entity": entities,
        "knowledge.Relation": relations,
        "knowledge.CurationEvent": events,
        "knowledge.EntityType": dict(
            EntityType.objects.for_workspace(workspace).values_list("pk", "name")
        ),
        "knowledge.RelationType": dict(
            RelationType.objects.for_workspace(workspace).values_list("pk", "name")
        ),
        "ingest.Chunk": chunks,
        "ingest.Document": {
            d.pk: (d.source.name, d.path)
            for d in Document.objects.for_workspace(workspace).select_related("source")
        },
        "knowledge.Mention": {
            m.pk: (chunks[m.chunk_id], m.char_start, m.surface_form)
            for m in Mention.objects.for_workspace(workspace)
        },
        "knowledge.RelationEvidence": {
            r.pk: (chunks[r.chunk_id], r.char_start, r.description)
            for r in RelationEvidence.objects.for_workspace(workspace)
        },
        "knowledge.Alias": {
            a.pk: (a.name, entities[a.entity_id]) for a in Alias.objects.for_workspace(workspace)
        },
        "knowledge.CurationRule": {
            r.pk: (r.kind, r.canonical, _of(entities, r.entity_id), _of(entities, r.other_id))
            for r in CurationRule.objects.for_workspace(workspace)
        },
        "knowledge.RelationRule": {
            r.pk: (relations[r.relation_id], r.outcome)
            for r in RelationRule.objects.for_workspace(workspace)
        },
        "knowledge.MergeSuggestion": {
            s.pk: (entities[s.entity_a_id], entities[s.entity_b_id])
            for s in MergeSuggestion.objects.for_workspace(workspace)
        },
    }


def content(workspace: Workspace) -> dict[str, Any]:
    """Everything an archive carries, as sorted lists of what each row says."""
    keys = natural_keys(workspace)
    entities, relations, events = (
        keys["knowledge.Entity"], keys["knowledge.Relation"], keys["knowledge.CurationEvent"]
    )  # fmt: skip
    names = PayloadRemapper(
        lambda label, pk: keys.get(label, {}).get(pk),
        fresh_id=lambda label: 0,
        workspace_id=0,
    )
    documents = Document.objects.for_workspace(workspace).select_related("source")
    relation_types = RelationType.objects.for_workspace(workspace).prefetch_related(
        "domain", "range"
    )
    return {
        "sources": sorted(
            (s.name, s.kind, s.status, s.created_by.username if s.created_by else None)
            for s in Source.objects.for_workspace(workspace)
        ),
        "documents": sorted(
            (d.source.name, d.path, d.text, d.content_hash, d.status, _blob_bytes(d.blob))
            for d in documents
        ),
        "chunks": sorted(
            (
                *keys["ingest.Chunk"][c.pk],
                c.text,
                c.char_start,
                c.char_end,
                c.embedding_dim,
                None if c.embedding is None else tuple(float(x) for x in c.embedding),
            )
            for c in Chunk.objects.for_workspace(workspace)
        ),
        "entity_types": sorted(keys["knowledge.EntityType"].values()),
        "relation_types": sorted(
            (
                t.name,
                t.status,
                sorted(d.name for d in t.domain.all()),
                sorted(r.name for r in t.range.all()),
            )
            for t in relation_types
        ),
        "entities": sorted(
            (
                entities[e.pk],
                e.state,
                e.canonical_name,
                e.aliases,
                e.mention_count,
                e.degree,
                e.curated,
                _of(entities, e.merged_into_id),
                e.description,
                sorted(Source.objects.get(pk=pk).name for pk in e.source_ids),
            )
            for e in Entity.objects.for_workspace(workspace)
        ),
        "relations": sorted(
            (
                relations[r.pk],
                r.state,
                r.evidence_count,
                r.weight,
                r.curated,
                _of(relations, r.merged_into_id),
            )
            for r in Relation.objects.for_workspace(workspace)
        ),
        "mentions": sorted(
            (keys["knowledge.Mention"][m.pk], entities[m.entity_id])
            for m in Mention.objects.for_workspace(workspace)
        ),
        "evidence": sorted(
            (
                keys["knowledge.RelationEvidence"][r.pk],
                relations[r.relation_id],
                _span(r.chunk.document.text, r.char_start, r.char_end),
            )
            for r in RelationEvidence.objects.for_workspace(workspace).select_related(
                "chunk__document"
            )
        ),
        "aliases": sorted(
            (keys["knowledge.Alias"][a.pk], a.canonical, a.origin, _of(events, a.event_id))
            for a in Alias.objects.for_workspace(workspace)
        ),
        "rules": sorted(
            (keys["knowledge.CurationRule"][r.pk], r.active, _of(events, r.event_id))
            for r in CurationRule.objects.for_workspace(workspace)
        ),
        "relation_rules": sorted(
            (
                entities[r.source_id],
                entities[r.target_id],
                r.type.name,
                keys["knowledge.RelationRule"][r.pk],
                r.active,
                _of(events, r.event_id),
            )
            for r in RelationRule.objects.for_workspace(workspace).select_related("type")
        ),
        "events": sorted(
            (
                events[e.pk],
                e.actor.username if e.actor else None,
                _of(entities, e.entity_id),
                _of(relations, e.relation_id),
                _of(events, e.undone_by_id),
                json.dumps(names.remap(e.action, e.payload), sort_keys=True, default=str),
            )
            for e in CurationEvent.objects.for_workspace(workspace)
        ),
    }


def _of(keys: dict[int, Any], pk: int | None) -> Any:
    return None if pk is None else keys.get(pk)


def _span(text: str, start: int | None, end: int | None) -> str | None:
    return None if start is None or end is None else text[start:end]


def _blob_bytes(name: str) -> str | None:
    if not name:
        return None
    return hashlib.sha256((Path(settings.MEDIA_ROOT) / name).read_bytes()).hexdigest()


# --- archives taken apart and put back together -------------------------------------------


def rewrite_archive(
    path: Path, change: Callable[[dict[str, bytes]], None], *, fix_manifest: bool = True
) -> Path:
    """A copy of the archive at `path` whose members `change` edited (the manifest's
    checksums and sizes recomputed unless `fix_manifest` is off)."""
    with zipfile.ZipFile(path) as source:
        members = {info.filename: source.read(info) for info in source.infolist()}
    change(members)
    if fix_manifest and "manifest.json" in members:
        manifest = json.loads(members["manifest.json"])
        manifest["members"] = {
            name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            for name, data in members.items()
            if name != "manifest.json"
        }
        members["manifest.json"] = json.dumps(manifest).encode()
    out = path.with_name(f"changed-{path.name}")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for name, data in members.items():
            target.writestr(name, data)
    out.write_bytes(buffer.getvalue())
    return out
