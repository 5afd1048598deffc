"""Turning a document's extraction runs into graph rows: entities (through resolution),
relations, `Mention` and `RelationEvidence`, in one transaction per document and
idempotently: evidence of runs the document no longer uses is deleted, windows already
materialised are skipped. Derived fields are then refreshed through the write funnel
(knowledge/actions/evidence.py).

A document's names are read once before its windows are written, with their first places,
so that its short forms ("Kestrel" after "Kestrel Navigation System") resolve to the full
name's entity (knowledge/actions/resolution.py, `short_form_plan` / `record_short_forms`).

The section labels of the document's source (knowledge/selectors/section_labels.py:
NAME, SYNOPSIS, "Parameters", "Method Summary", learnt from the headings the source
repeats, with a person's overrides) are its structure: no name that is one becomes an
entity, a mention or a relation's end here, and evidence of the source that an entity of
such a name still has (written before the label was learnt, in a crawl's first pages, or
before a person called it structure) is given back. This is the seam rather than the
extractor's window context: the context is part of a window's cache key, so a label learnt
as a crawl goes on would send every window to the LLM again, while here every extractor's
cached runs are filtered at no cost, and an override takes effect when the source is
extracted again.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from ingest.models import Document
from knowledge.actions.embeddings import prefetch_name_vectors
from knowledge.actions.evidence import Touched, delete_evidence, do_refresh_derived
from knowledge.actions.extraction.runs import EnsuredRuns
from knowledge.actions.resolution import (
    record_short_forms,
    resolve_entities,
    short_form_plan,
)
from knowledge.actions.schema import (
    FALLBACK_ENTITY_TYPE,
    FALLBACK_RELATION_TYPE,
    do_record_proposed_types,
)
from knowledge.canonical import canonical_name, type_name
from knowledge.consolidation.keys import entity_key
from knowledge.consolidation.matching import Key
from knowledge.consolidation.names.normalise import canonical_key
from knowledge.consolidation.short_forms import DocName, ShortFormPlan
from knowledge.extraction.windows import Window, find_occurrences, relation_span
from knowledge.models import (
    Entity,
    EntityState,
    EntityType,
    ExtractionRun,
    Mention,
    Relation,
    RelationEvidence,
    RelationType,
    TypeOrigin,
    TypeStatus,
)
from knowledge.models.curation import RelationOutcome, RelationRule
from knowledge.selectors.matching import known_entities
from knowledge.selectors.section_labels import label_key
from system.deadlocks import retry_on_deadlock
from workspaces.models import Workspace


class _TypeResolver:
    """Maps type names from extractor output to registry rows, recording NEW: proposals;
    unknown or retired types fall back to `concept` / `related_to` (counted)."""

    def __init__(self, workspace: Workspace, counts: dict[str, int]) -> None:
        self.workspace = workspace
        self.counts = counts
        self.entity = {t.name: t for t in EntityType.objects.for_workspace(workspace)}
        self.relation = {t.name: t for t in RelationType.objects.for_workspace(workspace)}

    def _resolve(self, kind: str, raw: str, proposed: bool, origin: str) -> Any:
        table = self.entity if kind == "entity" else self.relation
        fallback = FALLBACK_ENTITY_TYPE if kind == "entity" else FALLBACK_RELATION_TYPE
        name = type_name(raw) or fallback
        found = table.get(name)
        if found is None and proposed:
            created = do_record_proposed_types(
                workspace=self.workspace,
                kind="entity" if kind == "entity" else "relation",
                names=[name],
                origin=origin,
            )
            table.update(created)  # type: ignore[arg-type]
            found = table.get(name)
            self.counts[f"proposed_{kind}_types"] = self.counts.get(f"proposed_{kind}_types", 0) + 1
        if found is None or found.status == TypeStatus.RETIRED:
            self.counts[f"unknown_{kind}_types"] = self.counts.get(f"unknown_{kind}_types", 0) + 1
            found = table.get(fallback)
        return found

    def entity_type(self, raw: str, proposed: bool, origin: str) -> EntityType:
        return self._resolve("entity", raw, proposed, origin)

    def known_entity_type(self, raw: str) -> EntityType | None:
        """The active registry type of that name, without recording or counting anything."""
        found = self.entity.get(type_name(raw) or FALLBACK_ENTITY_TYPE)
        return found if found is not None and found.status != TypeStatus.RETIRED else None

    def relation_type(self, raw: str, proposed: bool, origin: str) -> RelationType:
        return self._resolve("relation", raw, proposed, origin)


# (workspace, entity, chunk, run, surface form, char start, char end, description,
#  extracted type, whether the description is the name's definition)
MentionRow = tuple[int, int, int, int, str, int | None, int | None, str, str, bool]


def _insert_mentions(rows: list[MentionRow]) -> None:
    """One set-based INSERT for a window's mentions: a dense window has hundreds, and
    building a model instance per row cost more than the database's work."""
    if not rows:
        return
    columns = list(zip(*rows, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {Mention._meta.db_table}
                (workspace_id, entity_id, chunk_id, run_id, surface_form, char_start,
                 char_end, description, extracted_type, defines, created_at)
            SELECT w, e, c, r, s, cs, ce, d, x, df, %s
            FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::text[],
                        %s::int[], %s::int[], %s::text[], %s::text[], %s::boolean[])
                 AS t(w, e, c, r, s, cs, ce, d, x, df)
            ON CONFLICT DO NOTHING
            """,  # noqa: S608 (the table name is ours; every value is a parameter)
            # The application's clock, like auto_now_add elsewhere (the database's now()
            # is the transaction's start).
            [timezone.now(), *(list(column) for column in columns)],
        )


WantedRelations = dict[tuple[int, int, int], tuple[dict[str, Any], RelationType]]


class _WindowWriter:
    """The rows one window's run contributes, collected name by name: entities by the names
    the model used, mention rows (located in the window text when the model gave no span),
    relations with their evidence."""

    def __init__(
        self,
        workspace: Workspace,
        window: Window,
        run: ExtractionRun,
        types: _TypeResolver,
        *,
        only_known: bool,
        counts: dict[str, int],
        short_forms: dict[Key, DocName] | None = None,
        structure: frozenset[str] = frozenset(),
        source_id: int | None = None,
    ) -> None:
        self.workspace, self.window, self.run, self.types = workspace, window, run, types
        # The source the window was read in: a name it gave one type stays one entity.
        self.source_id = source_id
        self.only_known, self.counts = only_known, counts
        # The keys of the source's section labels: names that are its structure.
        self.structure = structure
        self.origin = TypeOrigin.MODEL if run.extractor == "llm" else TypeOrigin.OFFLINE
        # The document's short forms: their names resolve as the full names they stand for.
        self.short_forms = short_forms or {}
        # Every name's entity by its key, and the short forms that went to a full name's.
        self.entities: dict[Key, Entity] = {}
        self.used_short_forms: dict[Key, Entity] = {}
        self.by_name: dict[str, Entity] = {}
        self.mentions: list[MentionRow] = []
        self.occurrences: dict[str, list[tuple[int, int]]] = {}

    def write(self, touched: Touched) -> None:
        """The window's run as rows: its entities resolved and mentioned, its relations
        (between entities it named, or dangling endpoints per
        EXTRACTION_DANGLING_RELATIONS) with their evidence."""
        result = self.run.result or {}
        relations = result.get("relations") or []
        self.add_entities(result.get("entities") or [])
        self.add_dangling(relations)
        wanted = self.wanted_relations(relations)
        _insert_mentions(self.mentions)
        touched.entities.update(row[1] for row in self.mentions)
        if wanted:
            touched.relations.update(self.write_relations(wanted))

    def count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def places_of(self, name: str) -> list[tuple[int, int]]:
        if name not in self.occurrences:
            self.occurrences[name] = find_occurrences(name, self.window.text)
        return self.occurrences[name]

    def is_structure(self, name: str) -> bool:
        return bool(self.structure) and label_key(name) in self.structure

    def entity_named(self, name: str) -> Entity | None:
        return self.by_name.get(name.strip().casefold()) or self.by_name.get(canonical_name(name))

    def add_entities(self, entities: list[dict[str, Any]]) -> None:
        typed = [
            (
                e,
                self.types.entity_type(
                    str(e.get("type", "")), bool(e.get("proposed_type")), self.origin
                ),
            )
            for e in entities
            if str(e.get("name", "")).strip() and not self._skipped_as_structure(str(e["name"]))
        ]
        resolved = resolve_entities(
            self.workspace,
            [(self.resolved_as(str(e["name"]), t), t) for e, t in typed],
            create=not self.only_known,
            counts=self.counts,
            source_id=self.source_id,
        )
        for raw, entity_type in typed:
            name = str(raw["name"])
            key = (entity_key(name, entity_type.name), entity_type.pk)
            resolved_name = self.resolved_as(name, entity_type)
            entity = resolved.get((entity_key(resolved_name, entity_type.name), entity_type.pk))
            if entity is None:
                self.count("entities_skipped_known_only")
                continue
            self.entities[key] = entity
            if resolved_name != name:
                self.used_short_forms[key] = entity
            self.by_name[name.casefold()] = entity
            self.by_name.setdefault(entity.canonical_name, entity)
            self.mention(
                entity,
                name,
                entity_type.name,
                str(raw.get("description", "")),
                list(raw.get("spans") or []),
                defines=raw.get("defines") is True,
            )

    def _skipped_as_structure(self, name: str) -> bool:
        if self.is_structure(name):
            self.count("entities_skipped_structure")
            return True
        return False

    def resolved_as(self, name: str, entity_type: EntityType) -> str:
        """The name to resolve: the full name a short form of the document stands for."""
        full = self.short_forms.get((entity_key(name, entity_type.name), entity_type.pk))
        return full.name if full is not None else name

    def add_dangling(self, relations: list[dict[str, Any]]) -> None:
        """Endpoints the model used in relations but did not list as entities."""
        dangling = {
            str(r.get(end, "")).strip()
            for r in relations
            for end in ("source", "target")
            if str(r.get(end, "")).strip()
            and not self.is_structure(str(r.get(end, "")))
            and str(r.get(end, "")).strip().casefold() not in self.by_name
            and canonical_name(str(r.get(end, ""))) not in self.by_name
        }
        if not dangling:
            return
        create = settings.EXTRACTION_DANGLING_RELATIONS == "create" and not self.only_known
        if not (create or self.only_known):
            return
        concept = self.types.entity_type(FALLBACK_ENTITY_TYPE, False, self.origin)
        extra = resolve_entities(
            self.workspace,
            [(name, concept) for name in dangling],
            create=create,
            counts=self.counts,
        )
        for name in dangling:
            entity = extra.get((entity_key(name, concept.name), concept.pk))
            if entity is not None:
                self.by_name[name.casefold()] = entity
                self.mention(entity, name, concept.name, "", [])

    def mention(
        self,
        entity: Entity,
        name: str,
        type_name: str,
        description: str,
        spans: list[Any],
        *,
        defines: bool = False,
    ) -> None:
        window, ids = self.window, (self.workspace.pk, entity.pk)
        places = [tuple(s) for s in spans if isinstance(s, list | tuple) and len(s) == 2]
        if not places:
            places = self.places_of(name)
        # The description is said once per window; the first occurrence carries it.
        description = description[:2000]
        defines = defines and bool(description)
        for start, end in places[:20]:
            doc_start, doc_end = window.start + int(start), window.start + int(end)
            chunk_id = window.chunk_for(doc_start, doc_end)
            surface = window.text[int(start) : int(end)][:300]
            self.mentions.append(
                (*ids, chunk_id, self.run.pk, surface, doc_start, doc_end, description, type_name,
                 defines)
            )  # fmt: skip
            description, defines = "", False
        if not places:
            self.count("mentions_unlocated")
            self.mentions.append(
                (*ids, window.chunk_ids[0], self.run.pk, name[:300], None, None, description,
                 type_name, defines)
            )  # fmt: skip

    def wanted_relations(self, relations: list[dict[str, Any]]) -> WantedRelations:
        """(source, target, type) -> the first raw relation saying it, ends resolved, and
        curation's relation rules applied (a deleted edge dropped, a retyped or reversed
        one landing on the edge as a person left it)."""
        found: list[tuple[tuple[int, int, int], dict[str, Any], RelationType]] = []
        for raw in relations:
            if self.is_structure(str(raw.get("source", ""))) or self.is_structure(
                str(raw.get("target", ""))
            ):
                self.count("relations_structure_dropped")
                continue
            source = self.entity_named(str(raw.get("source", "")))
            target = self.entity_named(str(raw.get("target", "")))
            if source is None or target is None:
                self.count("relations_dangling_dropped")
                continue
            if source.pk == target.pk:
                self.count("relations_self_dropped")
                continue
            relation_type = self.types.relation_type(
                str(raw.get("type", "")), bool(raw.get("proposed_type")), self.origin
            )
            found.append(((source.pk, target.pk, relation_type.pk), raw, relation_type))
        curated = curated_edges(self.workspace, {key for key, _, _ in found})
        wanted: WantedRelations = {}
        for key, raw, relation_type in found:
            if key in curated:
                if curated[key] is None:
                    self.count("relations_suppressed_by_curation")
                    continue
                key, relation_type = curated[key]  # type: ignore[misc]
            wanted.setdefault(key, (raw, relation_type))
        return wanted

    def write_relations(self, wanted: WantedRelations) -> set[int]:
        """Create the relations that are new, add this window's evidence to each; the ids
        of the relations that got evidence."""
        Relation.objects.bulk_create(
            [
                Relation(workspace=self.workspace, source_id=s, target_id=t, type=rt)
                for (s, t, _), (_, rt) in sorted(wanted.items(), key=lambda kv: kv[0])
            ],
            ignore_conflicts=True,
        )
        edges = {
            (r.source_id, r.target_id, r.type_id): r
            for r in Relation.objects.for_workspace(self.workspace).filter(
                state=EntityState.ACTIVE,
                source_id__in={s for s, _, _ in wanted},
                target_id__in={t for _, t, _ in wanted},
            )
        }
        evidence = [
            self.evidence_for(edges[key], raw) for key, (raw, _) in wanted.items() if key in edges
        ]
        RelationEvidence.objects.bulk_create(evidence, ignore_conflicts=True)
        return {row.relation_id for row in evidence}

    def evidence_for(self, relation: Relation, raw: dict[str, Any]) -> RelationEvidence:
        window = self.window
        span = raw.get("span")
        if not (isinstance(span, list) and len(span) == 2):
            span = relation_span(
                window.text,
                self.places_of(str(raw.get("source", ""))),
                self.places_of(str(raw.get("target", ""))),
            )
        if span is None:
            self.count("relations_unlocated")
            chunk_id, doc_start, doc_end = window.chunk_ids[0], None, None
        else:
            doc_start, doc_end = window.start + int(span[0]), window.start + int(span[1])
            chunk_id = window.chunk_for(doc_start, doc_end)
        try:
            strength = max(0.0, min(10.0, float(raw.get("strength", 5.0))))
        except (TypeError, ValueError):
            strength = 5.0
        return RelationEvidence(
            workspace=self.workspace,
            relation=relation,
            chunk_id=chunk_id,
            run=self.run,
            char_start=doc_start,
            char_end=doc_end,
            description=str(raw.get("description", ""))[:2000],
            keywords=[str(k)[:100] for k in (raw.get("keywords") or [])][:20],
            strength=strength,
        )


CuratedEdges = dict[tuple[int, int, int], tuple[tuple[int, int, int], RelationType] | None]


def curated_edges(workspace: Workspace, keys: set[tuple[int, int, int]]) -> CuratedEdges:
    """What curation says about these extracted edges (knowledge/models/curation.py,
    `RelationRule`): None for an edge a person deleted, the curated edge's (source,
    target, type) for one they retyped or reversed; edges without a rule are absent."""
    if not keys:
        return {}
    rules = (
        RelationRule.objects.for_workspace(workspace)
        .filter(
            active=True,
            source_id__in={s for s, _, _ in keys},
            target_id__in={t for _, t, _ in keys},
        )
        .select_related("relation__type")
        .order_by("pk")
    )
    edges: CuratedEdges = {}
    for rule in rules:
        key = (rule.source_id, rule.target_id, rule.type_id)
        if key not in keys:
            continue
        relation = rule.relation
        if rule.outcome == RelationOutcome.SUPPRESS or relation.state != EntityState.ACTIVE:
            edges[key] = None
        elif edges.get(key, ()) is not None:
            edges[key] = ((relation.source_id, relation.target_id, relation.type_id), relation.type)
    return edges


def _short_forms(
    workspace: Workspace,
    document: Document,
    windows: list[Window],
    runs: dict[str, ExtractionRun],
    types: _TypeResolver,
    structure: frozenset[str] = frozenset(),
) -> tuple[ShortFormPlan, dict[Key, str]]:
    """The document's short forms, from every name its runs give (in any window) and the
    first places of each; and each name's spelling as first given, by key."""
    found: dict[Key, tuple[str, EntityType, list[tuple[int, int]]]] = {}
    for window in windows:
        run = runs.get(window.hash)
        for raw in ((run.result or {}).get("entities") or []) if run is not None else []:
            name = str(raw.get("name", "")).strip()
            entity_type = types.known_entity_type(str(raw.get("type", "")))
            if not name or entity_type is None or (structure and label_key(name) in structure):
                continue
            key = (entity_key(name, entity_type.name), entity_type.pk)
            if not key[0]:
                continue
            spans = [
                s for s in raw.get("spans") or [] if isinstance(s, list | tuple) and len(s) == 2
            ]
            places = [(int(s), int(e)) for s, e in spans] or find_occurrences(name, window.text)
            entry = found.setdefault(key, (name, entity_type, []))
            entry[2].extend((window.start + s, window.start + e) for s, e in places)
    doc_names = [
        DocName(name=name, key=key, type_name=kind.name, places=tuple(sorted(set(places))))
        for key, (name, kind, places) in found.items()
    ]
    plan = short_form_plan(
        workspace, doc_names, document.text, {kind.pk: kind for _, kind, _ in found.values()}
    )
    return plan, {key: name for key, (name, _, _) in found.items()}


def _prefetch_new_names(
    workspace: Workspace,
    documents: list[Document],
    windows_by_doc: dict[int, list[Window]],
    runs: dict[str, ExtractionRun],
    types: _TypeResolver,
    structure: frozenset[str] = frozenset(),
) -> None:
    """Embed, in one call, the names of the batch's runs that no entity has yet: resolution
    then finds their vectors made (knowledge/actions/embeddings.py) instead of calling the
    model once per window, which cost more than embedding the chunks (bench/doc_quality.py
    speed). Only a cache is filled: a name resolved otherwise meanwhile costs nothing else."""
    wanted: dict[Key, tuple[str, EntityType]] = {}
    for document in documents:
        for window in windows_by_doc[document.pk]:
            run = runs.get(window.hash)
            for raw in ((run.result or {}).get("entities") or []) if run is not None else []:
                name = str(raw.get("name", "")).strip()
                if structure and label_key(name) in structure:
                    continue
                entity_type = types.known_entity_type(str(raw.get("type", "")))
                text = entity_key(name, entity_type.name) if name and entity_type else ""
                if text and entity_type is not None:
                    wanted.setdefault((text, entity_type.pk), (name[:300], entity_type))
    if wanted:
        missing = known_entities(workspace, wanted).missing
        prefetch_name_vectors([wanted[key][0] for key in missing])


MATERIALIZE_BATCH = 16  # documents per transaction (and per recomputation of derived fields)


def _lock_workspace_writes(workspace: Workspace) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"materialize:{workspace.pk}"],
        )


def _materialize(
    *,
    documents: list[Document],
    windows_by_doc: dict[int, list[Window]],
    runs: dict[str, ExtractionRun],
    refresh_hashes: set[str],
    only_known: bool,
    counts: dict[str, int],
    structure: frozenset[str] = frozenset(),
) -> set[int]:
    """Evidence for a batch of documents of one workspace, then their derived fields once,
    all in one transaction: readers never see evidence without its counts. Returns the
    entities touched."""
    workspace = documents[0].workspace
    touched = Touched()
    with transaction.atomic():
        # One batch of a workspace at a time: the entity names of a batch are locked window
        # by window (resolution.lock_names), so two batches sharing names ("Python", "str")
        # would take them in opposite orders and deadlock; extraction itself still runs in
        # parallel, only these writes take turns.
        _lock_workspace_writes(workspace)
        # The document rows are the lock: two workers materialising one take turns.
        list(
            Document.objects.select_for_update()
            .filter(pk__in=[d.pk for d in documents])
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        types = _TypeResolver(workspace, counts)
        if not only_known:
            _prefetch_new_names(workspace, documents, windows_by_doc, runs, types, structure)
        for document in documents:
            windows = windows_by_doc[document.pk]
            current = {runs[w.hash].pk for w in windows if w.hash in runs}
            delete_evidence(
                Mention.objects.filter(chunk__document=document).exclude(run_id__in=current),
                RelationEvidence.objects.filter(chunk__document=document).exclude(
                    run_id__in=current
                ),
                touched,
            )
            done = set(
                Mention.objects.filter(chunk__document=document).values_list("run_id", "chunk_id")
            ) | set(
                RelationEvidence.objects.filter(chunk__document=document).values_list(
                    "run_id", "chunk_id"
                )
            )
            plan, doc_names = _short_forms(workspace, document, windows, runs, types, structure)
            entities: dict[Key, Entity] = {}
            used: dict[Key, Entity] = {}
            for window in windows:
                run = runs.get(window.hash)
                if run is None:
                    continue
                if window.hash in refresh_hashes:
                    delete_evidence(
                        Mention.objects.filter(run=run, chunk_id__in=window.chunk_ids),
                        RelationEvidence.objects.filter(run=run, chunk_id__in=window.chunk_ids),
                        touched,
                    )
                elif any((run.pk, chunk_id) in done for chunk_id in window.chunk_ids):
                    continue
                writer = _WindowWriter(
                    workspace, window, run, types, only_known=only_known, counts=counts,
                    short_forms=plan.resolved, structure=structure,
                    source_id=document.source_id,
                )  # fmt: skip
                writer.write(touched)
                entities.update(writer.entities)
                used.update(writer.used_short_forms)
            if used or plan.ambiguous:
                record_short_forms(
                    workspace, document=document, plan=plan, used=used, entities=entities,
                    names_by_key=doc_names, counts=counts,
                )  # fmt: skip
        if structure:
            _forget_structure(workspace, documents[0].source_id, structure, touched)
        do_refresh_derived(
            workspace_id=workspace.pk, entity_ids=touched.entities, relation_ids=touched.relations
        )
    return touched.entities


def _forget_structure(
    workspace: Workspace,
    source_id: int,
    structure: frozenset[str],
    touched: Touched,
) -> None:
    """Give back the evidence the source's chunks still hold for entities named by one of
    its section labels: written before the label was learnt (a crawl's first pages are
    extracted before a label repeats) or before a person called it structure. Their
    mentions, and the evidence of relations they are an end of, go through the write
    funnel; an entity left with nothing is retired there, one with evidence elsewhere stays.
    """
    # Entities are keyed by their type's canonical key ("Parameters" is "parameter"):
    # found by it, then kept when their name is the label itself.
    keys = {canonical_key(label) for label in structure} | set(structure)
    named = [
        pk
        for pk, name in Entity.objects.for_workspace(workspace)
        .filter(canonical_name__in=keys)
        .values_list("pk", "name")
        if label_key(name) in structure
    ]
    if not named:
        return
    mentions = Mention.objects.filter(
        workspace=workspace, entity_id__in=named, chunk__document__source_id=source_id
    )
    evidence = RelationEvidence.objects.filter(
        Q(relation__source_id__in=named) | Q(relation__target_id__in=named),
        workspace=workspace,
        chunk__document__source_id=source_id,
    )
    delete_evidence(mentions, evidence, touched)


class Materializer:
    """Writes documents' evidence as soon as all their windows have runs, in batches, while
    the extractor's requests are still in flight (see `ensure_runs(idle=...)`)."""

    def __init__(
        self,
        *,
        documents: list[Document],
        windows_by_doc: dict[int, list[Window]],
        refresh_hashes: set[str],
        only_known: bool,
        structure: frozenset[str] = frozenset(),
    ) -> None:
        self.waiting = list(documents)
        # The keys of the section labels of the documents' source (one source a writer).
        self.structure = structure
        self.windows_by_doc = windows_by_doc
        self.refresh_hashes = refresh_hashes
        self.only_known = only_known
        self.counts: dict[str, int] = {}

    def write_ready(self, ensured: EnsuredRuns, *, final: bool = False) -> None:
        """Write the documents whose windows all have runs, or give nothing (named nothing
        known, for a known-only source): every one left when final."""
        ready = [
            d
            for d in self.waiting
            if final or all(ensured.settled(w.hash) for w in self.windows_by_doc[d.pk])
        ]
        if not ready:
            return
        self.waiting = [d for d in self.waiting if d not in ready]
        for start in range(0, len(ready), MATERIALIZE_BATCH):
            batch = partial(
                _materialize,
                documents=ready[start : start + MATERIALIZE_BATCH],
                windows_by_doc=self.windows_by_doc,
                runs=ensured.runs,
                refresh_hashes=self.refresh_hashes,
                only_known=self.only_known,
                counts=self.counts,
                structure=self.structure,
            )
            # A batch the database aborted to break a deadlock with another worker wrote
            # nothing: it runs again (system/deadlocks.py), its counts put back first.
            retry_on_deadlock(batch, on_retry=partial(self._restore_counts, dict(self.counts)))

    def _restore_counts(self, before: dict[str, int]) -> None:
        self.counts.clear()
        self.counts.update(before)
