"""Extract entities and relations from documents and record them with their evidence.

The flow for a set of documents of one source:

1. Windows are built from each document's chunks (knowledge/extraction/windows.py).
2. `_ensure_runs` finds the cached `ExtractionRun` of every window (key: window hash, prompt
   version, model, schema hash) and extracts only the missing ones: LLM windows run
   LLM_CONCURRENCY at a time in threads (which never touch the database); this thread
   reserves each window's worst-case tokens against the source's budget before sending it,
   and stores each finished window's run and calls at once (its own transaction), so a
   killed worker loses at most the windows in flight.
3. `_materialize` turns each document's runs into entities, relations, `Mention` and
   `RelationEvidence` rows in one transaction per document, idempotently: evidence of runs
   the document no longer uses is deleted, windows already materialised are skipped.
4. Derived fields (mention counts, first/last seen, descriptions, relation weights) are
   recomputed for what was touched; entities and relations left with no evidence go.

Entities are matched by exact canonical name within their type: the simplest form, which
the consolidation step replaces.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, Min, Sum
from django.db.models import Window as SqlWindow
from django.db.models.functions import RowNumber
from django.utils import timezone

from ingest.actions.pipeline import StageFailed
from ingest.models import Chunk, Document, DocumentStatus, Source, SourceStatus
from knowledge.actions.schema import (
    FALLBACK_ENTITY_TYPE,
    FALLBACK_RELATION_TYPE,
    do_ensure_default_schema,
    do_record_proposed_types,
)
from knowledge.canonical import canonical_name, type_name
from knowledge.consolidation.keys import entity_blocking_keys, entity_key
from knowledge.consolidation.resolution import resolve_entities
from knowledge.extraction.extractors import Extractor, WindowOutcome, get_extractor
from knowledge.extraction.offline import OfflineExtractorUnavailable
from knowledge.extraction.schema import SchemaSnapshot
from knowledge.extraction.windows import Window, build_windows, find_occurrences, relation_span
from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import (
    Entity,
    EntityState,
    EntityType,
    ExtractionRun,
    ExtractionStatus,
    LlmCall,
    Mention,
    Relation,
    RelationEvidence,
    RelationType,
    SourceExtraction,
    TypeOrigin,
    TypeStatus,
)
from knowledge.selectors.schema import get_schema_snapshot
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

Progress = Callable[[int], None]  # called with the number of windows just finished


# --- Windows -------------------------------------------------------------------------


def document_windows(document: Document) -> list[Window]:
    chunks = list(
        Chunk.objects.filter(document=document)
        .only("pk", "ordinal", "char_start", "char_end", "token_count", "content_hash")
        .order_by("ordinal")
    )
    return build_windows(
        document.text, chunks, target_tokens=max(1, settings.EXTRACTION_WINDOW_TOKENS)
    )


# --- The source's account: budget, reservations, usage ---------------------------------


def source_budget(source: Source) -> int | None:
    """The source's `token_budget` setting, else EXTRACTION_SOURCE_TOKEN_BUDGET; None = no
    limit."""
    raw = (source.settings or {}).get("token_budget")
    try:
        value = int(raw) if raw is not None else settings.EXTRACTION_SOURCE_TOKEN_BUDGET
    except (TypeError, ValueError):
        value = settings.EXTRACTION_SOURCE_TOKEN_BUDGET
    return value if value > 0 else None


def known_only(source: Source) -> bool:
    return bool((source.settings or {}).get("known_only"))


def _account(source: Source, extractor: Extractor) -> SourceExtraction:
    account, _ = SourceExtraction.objects.get_or_create(
        source=source, defaults={"workspace_id": source.workspace_id}
    )
    budget = source_budget(source)
    fields: dict[str, Any] = {
        "extractor": extractor.kind,
        "model": extractor.model_id,
        "token_budget": budget,
    }
    if account.status in {ExtractionStatus.PENDING, ExtractionStatus.DONE}:
        fields["status"] = ExtractionStatus.RUNNING
        fields["message"] = ""
    if account.started_at is None:
        fields["started_at"] = timezone.now()
    SourceExtraction.objects.filter(pk=account.pk).update(**fields)
    account.refresh_from_db()
    return account


def _reserve(account_id: int, tokens: int, *, ttl: float) -> str | None:
    """Promise `tokens` of the budget to one window; None when they do not fit.

    Reservations live on the account row (locked while changed) so two workers extracting
    the same source cannot together pass the budget; each expires after `ttl` seconds so a
    killed worker's promises are released.
    """
    with transaction.atomic():
        account = SourceExtraction.objects.select_for_update().get(pk=account_id)
        now = time.time()
        live = {k: v for k, v in (account.reservations or {}).items() if v[1] > now}
        if account.token_budget is not None and (
            account.tokens_used + sum(v[0] for v in live.values()) + tokens > account.token_budget
        ):
            if live != account.reservations:
                account.reservations = live
                account.save(update_fields=["reservations", "updated_at"])
            return None
        key = uuid.uuid4().hex
        live[key] = [tokens, now + ttl]
        account.reservations = live
        account.save(update_fields=["reservations", "updated_at"])
        return key


def llm_cost(prompt_tokens: int, completion_tokens: int) -> Decimal:
    return (
        Decimal(prompt_tokens) * Decimal(str(settings.LLM_PRICE_INPUT_PER_MTOK))
        + Decimal(completion_tokens) * Decimal(str(settings.LLM_PRICE_OUTPUT_PER_MTOK))
    ) / Decimal(1_000_000)


def _record_window(
    *,
    account: SourceExtraction,
    source: Source,
    window: Window,
    outcome: WindowOutcome,
    extractor: Extractor,
    schema: SchemaSnapshot,
    reservation: str | None,
) -> ExtractionRun | None:
    """Store a finished window's calls (always) and its run (when it succeeded), release its
    reservation and add its usage to the source — one transaction."""
    with transaction.atomic():
        locked = SourceExtraction.objects.select_for_update().get(pk=account.pk)
        run = None
        if outcome.error is None:
            run, _ = ExtractionRun.objects.update_or_create(
                workspace_id=source.workspace_id,
                window_hash=window.hash,
                prompt_version=extractor.prompt_version,
                model=extractor.model_id,
                schema_hash=schema.hash,
                defaults={
                    "extractor": extractor.kind,
                    "source": source,
                    "raw_output": outcome.raw_output,
                    "result": _result_json(outcome),
                    "counts": outcome.result.counts,
                    "problems": outcome.result.problems[:20],
                    "passes": outcome.passes,
                    "prompt_tokens": outcome.prompt_tokens,
                    "completion_tokens": outcome.completion_tokens,
                    "duration_ms": outcome.duration_ms,
                },
            )
        cost = Decimal(0)
        calls = []
        for call in outcome.calls:
            call_cost = llm_cost(call.prompt_tokens, call.completion_tokens)
            cost += call_cost
            calls.append(
                LlmCall(
                    workspace_id=source.workspace_id,
                    source=source,
                    run=run,
                    purpose=call.purpose,
                    model=extractor.model_id,
                    prompt_tokens=call.prompt_tokens,
                    completion_tokens=call.completion_tokens,
                    usage_estimated=call.usage_estimated,
                    cost=call_cost,
                    duration_ms=call.duration_ms,
                    attempts=call.attempts,
                    ok=call.ok,
                    error=call.error[:2000],
                )
            )
        LlmCall.objects.bulk_create(calls)
        reservations = dict(locked.reservations or {})
        if reservation:
            reservations.pop(reservation, None)
        locked.reservations = reservations
        locked.prompt_tokens += outcome.prompt_tokens
        locked.completion_tokens += outcome.completion_tokens
        locked.calls += len(outcome.calls)
        locked.cost += cost
        if run is not None:
            locked.windows_extracted += 1
        locked.save(
            update_fields=[
                "reservations", "prompt_tokens", "completion_tokens", "calls", "cost",
                "windows_extracted", "updated_at",
            ]
        )  # fmt: skip
    return run


def _result_json(outcome: WindowOutcome) -> dict[str, list[dict[str, Any]]]:
    return {
        "entities": [
            {
                "name": e.name,
                "type": e.type,
                "description": e.description,
                "proposed_type": e.proposed_type,
                "spans": [list(span) for span in e.spans],
            }
            for e in outcome.result.entities
        ],
        "relations": [
            {
                "source": r.source,
                "target": r.target,
                "type": r.type,
                "description": r.description,
                "keywords": list(r.keywords),
                "strength": r.strength,
                "proposed_type": r.proposed_type,
                "span": list(r.span) if r.span else None,
            }
            for r in outcome.result.relations
        ],
    }


def _add_counts(account_id: int, counts: dict[str, int]) -> None:
    if not any(counts.values()):
        return
    with transaction.atomic():
        account = SourceExtraction.objects.select_for_update().get(pk=account_id)
        merged = dict(account.counts or {})
        for key, value in counts.items():
            if value:
                merged[key] = merged.get(key, 0) + value
        account.counts = merged
        account.save(update_fields=["counts", "updated_at"])


# --- Runs: the cache, and the windows it lacks ------------------------------------------


@dataclass(slots=True)
class EnsuredRuns:
    runs: dict[str, ExtractionRun] = field(default_factory=dict)  # by window hash
    cached: int = 0
    extracted: int = 0
    skipped_for_budget: int = 0
    error: str = ""


def _source_stopped(source_id: int) -> bool:
    status = Source.objects.filter(pk=source_id).values_list("status", flat=True).first()
    return status in {None, SourceStatus.CANCELLED, SourceStatus.DELETING}


def _ensure_runs(
    *,
    source: Source,
    windows: list[Window],
    extractor: Extractor,
    schema: SchemaSnapshot,
    force: bool = False,
    progress: Progress | None = None,
    idle: Callable[[EnsuredRuns], None] | None = None,
) -> EnsuredRuns:
    """The run of every window: from the cache, else extracted now. `idle` is called while
    requests are in flight, so the caller can write what is ready meanwhile."""
    account = _account(source, extractor)
    unique: dict[str, Window] = {}
    for window in windows:
        unique.setdefault(window.hash, window)
    ensured = EnsuredRuns()
    if not force:
        for run in ExtractionRun.objects.filter(
            workspace_id=source.workspace_id,
            window_hash__in=list(unique),
            prompt_version=extractor.prompt_version,
            model=extractor.model_id,
            schema_hash=schema.hash,
        ):
            ensured.runs[run.window_hash] = run
    ensured.cached = len(ensured.runs)
    if progress and ensured.cached:
        progress(ensured.cached)
    missing = [w for h, w in unique.items() if h not in ensured.runs]
    if ensured.cached:
        SourceExtraction.objects.filter(pk=account.pk).update(
            windows_cached=F("windows_cached") + ensured.cached
        )
    if not missing:
        return ensured

    ttl = (settings.LLM_TIMEOUT + settings.LLM_RETRY_MAX_DELAY) * (settings.LLM_MAX_RETRIES + 1) * (
        settings.EXTRACTION_GLEANING_PASSES + 1
    ) + 60
    # LLM windows go through the thread pool even one at a time, so writing evidence (idle)
    # overlaps the wait; the offline extractor is CPU-bound and runs here, in turn.
    threaded = extractor.kind == "llm"
    concurrency = max(1, settings.LLM_CONCURRENCY) if threaded else 1
    queue = list(missing)
    budget_hit = False
    # Without a budget there is nothing to reserve (one transaction less per window).
    budgeted = account.token_budget is not None

    def finish(window: Window, outcome: WindowOutcome, reservation: str | None) -> None:
        run = _record_window(
            account=account,
            source=source,
            window=window,
            outcome=outcome,
            extractor=extractor,
            schema=schema,
            reservation=reservation,
        )
        if run is not None:
            ensured.runs[window.hash] = run
            ensured.extracted += 1
        elif outcome.error is not None and not ensured.error:
            ensured.error = str(outcome.error)
        if progress:
            progress(1)

    if not threaded:
        for index, window in enumerate(queue):
            if ensured.error or (index % 8 == 0 and _source_stopped(source.pk)):
                break
            cost = extractor.max_tokens_for(window.text, schema=schema) if budgeted else 0
            reservation = _reserve(account.pk, cost, ttl=ttl) if cost else None
            if cost and reservation is None:
                ensured.skipped_for_budget = len(queue) - index
                budget_hit = True
                break
            finish(window, extractor.extract(window.text, schema=schema), reservation)
    else:
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="llm") as pool:
            in_flight: dict[Future[WindowOutcome], tuple[Window, str | None]] = {}
            position = 0

            def submit() -> bool:
                nonlocal position, budget_hit
                if position >= len(queue) or ensured.error or budget_hit:
                    return False
                window = queue[position]
                reservation = None
                if budgeted:
                    cost = extractor.max_tokens_for(window.text, schema=schema)
                    reservation = _reserve(account.pk, cost, ttl=ttl)
                if budgeted and reservation is None:
                    budget_hit = True
                    ensured.skipped_for_budget = len(queue) - position
                    return False
                position += 1
                future = pool.submit(extractor.extract, window.text, schema=schema)
                in_flight[future] = (window, reservation)
                return True

            while len(in_flight) < concurrency and submit():
                pass
            checked = time.monotonic()
            while in_flight:
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                for future in done:
                    window, reservation = in_flight.pop(future)
                    finish(window, future.result(), reservation)
                if time.monotonic() - checked > 2:
                    checked = time.monotonic()
                    if _source_stopped(source.pk):
                        position = len(queue)
                while len(in_flight) < concurrency and submit():
                    pass
                if idle and in_flight:
                    idle(ensured)

    if budget_hit and ensured.skipped_for_budget:
        account.refresh_from_db()
        message = (
            f"Stopped: the token budget of {account.token_budget:,} tokens was reached "
            f"({account.tokens_used:,} used); {ensured.skipped_for_budget} window(s) were "
            "not extracted. Raise the source's token_budget (or "
            "EXTRACTION_SOURCE_TOKEN_BUDGET) and run `manage.py extract --workspace "
            f"{source.workspace.slug} --source {source.pk}` to continue."
        )
        SourceExtraction.objects.filter(pk=account.pk).update(
            status=ExtractionStatus.BUDGET_EXCEEDED,
            message=message,
            windows_skipped=F("windows_skipped") + ensured.skipped_for_budget,
        )
        Source.objects.filter(pk=source.pk).update(warning=message[:2000])
    if ensured.error:
        SourceExtraction.objects.filter(pk=account.pk).update(
            status=ExtractionStatus.FAILED, message=f"Extraction failed: {ensured.error}"[:2000]
        )
    return ensured


# --- Types and entities (the simplest form: exact canonical name within type) ------------


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

    def relation_type(self, raw: str, proposed: bool, origin: str) -> RelationType:
        return self._resolve("relation", raw, proposed, origin)


# --- Materialising runs into evidence ----------------------------------------------------


@dataclass(slots=True)
class Touched:
    entities: set[int] = field(default_factory=set)
    relations: set[int] = field(default_factory=set)


def _delete_evidence(mentions: Any, evidence: Any, touched: Touched) -> None:
    touched.entities.update(mentions.values_list("entity_id", flat=True).distinct())
    touched.relations.update(evidence.values_list("relation_id", flat=True).distinct())
    mentions.delete()
    evidence.delete()


# (workspace, entity, chunk, run, surface form, char start, char end, description,
#  extracted type)
MentionRow = tuple[int, int, int, int, str, int | None, int | None, str, str]


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
                 char_end, description, extracted_type, created_at)
            SELECT w, e, c, r, s, cs, ce, d, x, %s
            FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::text[],
                        %s::int[], %s::int[], %s::text[], %s::text[])
                 AS t(w, e, c, r, s, cs, ce, d, x)
            ON CONFLICT DO NOTHING
            """,  # noqa: S608 (the table name is ours; every value is a parameter)
            # The application's clock, like auto_now_add elsewhere (the database's now()
            # is the transaction's start).
            [timezone.now(), *(list(column) for column in columns)],
        )


def _materialize_window(
    *,
    workspace: Workspace,
    window: Window,
    run: ExtractionRun,
    types: _TypeResolver,
    only_known: bool,
    counts: dict[str, int],
    touched: Touched,
) -> None:
    result = run.result or {}
    origin = TypeOrigin.MODEL if run.extractor == "llm" else TypeOrigin.OFFLINE
    entities = result.get("entities") or []
    relations = result.get("relations") or []
    typed = [
        (e, types.entity_type(str(e.get("type", "")), bool(e.get("proposed_type")), origin))
        for e in entities
        if str(e.get("name", "")).strip()
    ]
    resolved = resolve_entities(
        workspace, [(str(e["name"]), t) for e, t in typed], create=not only_known, counts=counts
    )
    by_name: dict[str, Entity] = {}
    mentions: list[MentionRow] = []
    occurrences: dict[str, list[tuple[int, int]]] = {}

    def places_of(name: str) -> list[tuple[int, int]]:
        if name not in occurrences:
            occurrences[name] = find_occurrences(name, window.text)
        return occurrences[name]

    def mention(
        entity: Entity, name: str, type_name: str, description: str, spans: list[Any]
    ) -> None:
        places = [tuple(s) for s in spans if isinstance(s, list | tuple) and len(s) == 2]
        if not places:
            places = places_of(name)
        # The description is said once per window; the first occurrence carries it.
        description = description[:2000]
        for start, end in places[:20]:
            doc_start, doc_end = window.start + int(start), window.start + int(end)
            mentions.append(
                (
                    workspace.pk,
                    entity.pk,
                    window.chunk_for(doc_start, doc_end),
                    run.pk,
                    window.text[int(start) : int(end)][:300],
                    doc_start,
                    doc_end,
                    description,
                    type_name,
                )
            )
            description = ""
        if not places:
            counts["mentions_unlocated"] = counts.get("mentions_unlocated", 0) + 1
            mentions.append(
                (workspace.pk, entity.pk, window.chunk_ids[0], run.pk, name[:300], None, None,
                 description, type_name)
            )  # fmt: skip

    for raw, entity_type in typed:
        name = str(raw["name"])
        entity = resolved.get((entity_key(name, entity_type.name), entity_type.pk))
        if entity is None:
            counts["entities_skipped_known_only"] = counts.get("entities_skipped_known_only", 0) + 1
            continue
        by_name[name.casefold()] = entity
        by_name.setdefault(entity.canonical_name, entity)
        mention(
            entity,
            name,
            entity_type.name,
            str(raw.get("description", "")),
            list(raw.get("spans") or []),
        )

    # Endpoints the model used in relations but did not list as entities.
    dangling = {
        str(r.get(end, "")).strip()
        for r in relations
        for end in ("source", "target")
        if str(r.get(end, "")).strip()
        and str(r.get(end, "")).strip().casefold() not in by_name
        and canonical_name(str(r.get(end, ""))) not in by_name
    }
    if dangling:
        create_dangling = settings.EXTRACTION_DANGLING_RELATIONS == "create" and not only_known
        if create_dangling or only_known:
            concept = types.entity_type(FALLBACK_ENTITY_TYPE, False, origin)
            extra = resolve_entities(
                workspace,
                [(name, concept) for name in dangling],
                create=create_dangling,
                counts=counts,
            )
            for name in dangling:
                entity = extra.get((entity_key(name, concept.name), concept.pk))
                if entity is not None:
                    by_name[name.casefold()] = entity
                    mention(entity, name, concept.name, "", [])

    wanted_relations: dict[tuple[int, int, int], tuple[dict[str, Any], RelationType]] = {}
    for raw in relations:
        source_name, target_name = str(raw.get("source", "")), str(raw.get("target", ""))
        source = by_name.get(source_name.strip().casefold()) or by_name.get(
            canonical_name(source_name)
        )
        target = by_name.get(target_name.strip().casefold()) or by_name.get(
            canonical_name(target_name)
        )
        if source is None or target is None:
            counts["relations_dangling_dropped"] = counts.get("relations_dangling_dropped", 0) + 1
            continue
        if source.pk == target.pk:
            counts["relations_self_dropped"] = counts.get("relations_self_dropped", 0) + 1
            continue
        relation_type = types.relation_type(
            str(raw.get("type", "")), bool(raw.get("proposed_type")), origin
        )
        wanted_relations.setdefault((source.pk, target.pk, relation_type.pk), (raw, relation_type))
    _insert_mentions(mentions)
    touched.entities.update(row[1] for row in mentions)
    if not wanted_relations:
        return
    Relation.objects.bulk_create(
        [
            Relation(workspace=workspace, source_id=s, target_id=t, type=rt)
            for (s, t, _), (_, rt) in sorted(wanted_relations.items(), key=lambda kv: kv[0])
        ],
        ignore_conflicts=True,
    )
    edges = {
        (r.source_id, r.target_id, r.type_id): r
        for r in Relation.objects.for_workspace(workspace).filter(
            state=EntityState.ACTIVE,
            source_id__in={s for s, _, _ in wanted_relations},
            target_id__in={t for _, t, _ in wanted_relations},
        )
    }
    evidence = []
    for key, (raw, _) in wanted_relations.items():
        relation = edges.get(key)
        if relation is None:
            continue
        span = raw.get("span")
        if not (isinstance(span, list) and len(span) == 2):
            span = relation_span(
                window.text,
                places_of(str(raw.get("source", ""))),
                places_of(str(raw.get("target", ""))),
            )
        if span is None:
            counts["relations_unlocated"] = counts.get("relations_unlocated", 0) + 1
            chunk_id, doc_start, doc_end = window.chunk_ids[0], None, None
        else:
            doc_start, doc_end = window.start + int(span[0]), window.start + int(span[1])
            chunk_id = window.chunk_for(doc_start, doc_end)
        try:
            strength = max(0.0, min(10.0, float(raw.get("strength", 5.0))))
        except (TypeError, ValueError):
            strength = 5.0
        evidence.append(
            RelationEvidence(
                workspace=workspace,
                relation=relation,
                chunk_id=chunk_id,
                run=run,
                char_start=doc_start,
                char_end=doc_end,
                description=str(raw.get("description", ""))[:2000],
                keywords=[str(k)[:100] for k in (raw.get("keywords") or [])][:20],
                strength=strength,
            )
        )
        touched.relations.add(relation.pk)
    RelationEvidence.objects.bulk_create(evidence, ignore_conflicts=True)


MATERIALIZE_BATCH = 16  # documents per transaction (and per recomputation of derived fields)


def _materialize(
    *,
    documents: list[Document],
    windows_by_doc: dict[int, list[Window]],
    runs: dict[str, ExtractionRun],
    refresh_hashes: set[str],
    only_known: bool,
    counts: dict[str, int],
) -> set[int]:
    """Evidence for a batch of documents of one workspace, then their derived fields once,
    all in one transaction: readers never see evidence without its counts. Returns the
    entities touched."""
    workspace = documents[0].workspace
    touched = Touched()
    with transaction.atomic():
        # The document rows are the lock: two workers materialising one take turns.
        list(
            Document.objects.select_for_update()
            .filter(pk__in=[d.pk for d in documents])
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        types = _TypeResolver(workspace, counts)
        for document in documents:
            windows = windows_by_doc[document.pk]
            current = {runs[w.hash].pk for w in windows if w.hash in runs}
            _delete_evidence(
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
            for window in windows:
                run = runs.get(window.hash)
                if run is None:
                    continue
                if window.hash in refresh_hashes:
                    _delete_evidence(
                        Mention.objects.filter(run=run, chunk_id__in=window.chunk_ids),
                        RelationEvidence.objects.filter(run=run, chunk_id__in=window.chunk_ids),
                        touched,
                    )
                elif any((run.pk, chunk_id) in done for chunk_id in window.chunk_ids):
                    continue
                _materialize_window(
                    workspace=workspace,
                    window=window,
                    run=run,
                    types=types,
                    only_known=only_known,
                    counts=counts,
                    touched=touched,
                )
        do_refresh_derived(
            workspace_id=workspace.pk, entity_ids=touched.entities, relation_ids=touched.relations
        )
    return touched.entities


class _Materializer:
    """Writes documents' evidence as soon as all their windows have runs, in batches, while
    the extractor's requests are still in flight (see `_ensure_runs(idle=...)`)."""

    def __init__(
        self,
        *,
        documents: list[Document],
        windows_by_doc: dict[int, list[Window]],
        refresh_hashes: set[str],
        only_known: bool,
    ) -> None:
        self.waiting = list(documents)
        self.windows_by_doc = windows_by_doc
        self.refresh_hashes = refresh_hashes
        self.only_known = only_known
        self.counts: dict[str, int] = {}
        self.touched: set[int] = set()

    def write_ready(self, ensured: EnsuredRuns, *, final: bool = False) -> None:
        """Write the documents whose windows all have runs (every one left when final)."""
        ready = [
            d
            for d in self.waiting
            if final or all(w.hash in ensured.runs for w in self.windows_by_doc[d.pk])
        ]
        if not ready:
            return
        self.waiting = [d for d in self.waiting if d not in ready]
        for start in range(0, len(ready), MATERIALIZE_BATCH):
            self.touched |= _materialize(
                documents=ready[start : start + MATERIALIZE_BATCH],
                windows_by_doc=self.windows_by_doc,
                runs=ensured.runs,
                refresh_hashes=self.refresh_hashes,
                only_known=self.only_known,
                counts=self.counts,
            )


def _first_rows(queryset: Any, *, partition: str, fields: tuple[str, ...], limit: int) -> Any:
    """The first `limit` rows (by id) of each `partition` value, in one query."""
    return (
        queryset.annotate(
            row=SqlWindow(RowNumber(), partition_by=[F(partition)], order_by=F("pk").asc())
        )
        .filter(row__lte=limit)
        .order_by(partition, "pk")
        .values_list(partition, *fields)
    )


def do_refresh_derived(
    *,
    workspace_id: int,
    entity_ids: Iterable[int],
    relation_ids: Iterable[int],
    prune: bool = True,
) -> None:
    """Recompute counts, first/last seen, descriptions and weights from evidence, in a
    fixed number of queries however many rows were touched; active entities and relations
    with no evidence left are deleted (they came from nothing else), unless a person
    curated the entity. Curation passes `prune=False`: it never deletes as a side effect.
    Every change to the graph passes through here, so here the projection is told."""
    entity_ids, relation_ids = set(entity_ids), set(relation_ids)
    if relation_ids:
        stats = {
            row["relation_id"]: row
            for row in RelationEvidence.objects.filter(relation_id__in=relation_ids)
            .values("relation_id")
            .annotate(n=Count("pk"), strength=Sum("strength"))
        }
        # Only live edges go; one folded into another by a merge waits for its unmerge.
        if prune:
            Relation.objects.filter(
                pk__in=relation_ids - set(stats), state=EntityState.ACTIVE
            ).delete()
        Relation.objects.filter(pk__in=relation_ids - set(stats)).update(
            evidence_count=0, weight=0.0
        )
        fragments: dict[int, list[tuple[str, list[str]]]] = {}
        for relation_id, description, keywords in _first_rows(
            RelationEvidence.objects.filter(relation_id__in=set(stats)),
            partition="relation_id",
            fields=("description", "keywords"),
            limit=50,
        ):
            fragments.setdefault(relation_id, []).append((description, keywords or []))
        updates = []
        for relation in Relation.objects.filter(pk__in=set(stats)).only("pk"):
            row, parts = stats[relation.pk], fragments.get(relation.pk, [])
            relation.evidence_count = row["n"]
            relation.weight = round(float(row["strength"] or 0) / 10, 3)
            relation.description = _top_fragments(d for d, _ in parts)
            relation.keywords = _keywords(k for _, ks in parts for k in ks)
            updates.append(relation)
        Relation.objects.bulk_update(
            updates, ["evidence_count", "weight", "description", "keywords"], batch_size=500
        )
    if entity_ids:
        entity_stats = {
            row["entity_id"]: row
            for row in Mention.objects.filter(entity_id__in=entity_ids)
            .values("entity_id")
            .annotate(n=Count("pk"), first=Min("created_at"), last=Max("created_at"))
        }
        # Entities a person curated stay without evidence; merged ones wait for an unmerge.
        if prune:
            Entity.objects.filter(
                pk__in=entity_ids - set(entity_stats), state=EntityState.ACTIVE, curated=False
            ).delete()
        Entity.objects.filter(pk__in=entity_ids - set(entity_stats)).update(
            mention_count=0, source_ids=[]
        )
        sources: dict[int, list[int]] = {}
        for entity_id, source_id in (
            Mention.objects.filter(entity_id__in=set(entity_stats))
            .values_list("entity_id", "chunk__document__source_id")
            .distinct()
            .order_by("entity_id", "chunk__document__source_id")
        ):
            sources.setdefault(entity_id, []).append(source_id)
        descriptions: dict[int, list[str]] = {}
        for entity_id, description in _first_rows(
            Mention.objects.filter(entity_id__in=set(entity_stats)).exclude(description=""),
            partition="entity_id",
            fields=("description",),
            limit=50,
        ):
            descriptions.setdefault(entity_id, []).append(description)
        votes: dict[int, dict[str, int]] = {}
        for entity_id, type_name, n in (
            Mention.objects.filter(entity_id__in=set(entity_stats))
            .exclude(extracted_type="")
            .values_list("entity_id", "extracted_type")
            .annotate(n=Count("pk"))
            .order_by()
        ):
            votes.setdefault(entity_id, {})[type_name] = n
        entity_updates: list[Entity] = []
        for entity in Entity.objects.filter(pk__in=set(entity_stats)).only(
            "pk", "summary", "summary_hash", "type_votes"
        ):
            seen = entity_stats[entity.pk]
            entity.type_votes = dict(sorted(votes.get(entity.pk, {}).items()))
            entity.mention_count = seen["n"]
            entity.source_ids = sources.get(entity.pk, [])
            entity.first_seen_at, entity.last_seen_at = seen["first"], seen["last"]
            own = descriptions.get(entity.pk, [])
            if entity.summary and entity.summary_hash == fragments_hash(own):
                entity.description = entity.summary
            else:
                entity.description = _top_fragments(own)
            entity_updates.append(entity)
        Entity.objects.bulk_update(
            entity_updates,
            ["mention_count", "source_ids", "first_seen_at", "last_seen_at", "description",
             "type_votes"],
            batch_size=500,
        )  # fmt: skip
        _follow_type_votes(entity_ids)
    schedule_graph_sync(workspace_id=workspace_id, entity_ids=entity_ids, relation_ids=relation_ids)


def _follow_type_votes(entity_ids: set[int]) -> None:
    """Retype entities whose evidence mostly says another type (a strict majority over the
    current type's votes), unless a person set the type. The name's canonical key and
    blocking keys follow the type; an active entity already holding that (type, key) — a
    homonym kept apart — keeps the entity where it is."""
    for entity in Entity.objects.filter(
        pk__in=entity_ids, state=EntityState.ACTIVE, type_curated=False
    ).select_related("type"):
        votes = entity.type_votes or {}
        if not votes:
            continue
        winner = max(sorted(votes), key=lambda name: votes[name])
        if winner == entity.type.name or votes[winner] <= votes.get(entity.type.name, 0):
            continue
        new_type = EntityType.objects.filter(
            workspace_id=entity.workspace_id, name=winner, status=TypeStatus.ACTIVE
        ).first()
        if new_type is None:
            continue
        canonical = entity_key(entity.name, new_type.name) or entity.canonical_name
        taken = (
            Entity.objects.filter(
                workspace_id=entity.workspace_id,
                state=EntityState.ACTIVE,
                type=new_type,
                canonical_name=canonical,
            )
            .exclude(pk=entity.pk)
            .exists()
        )
        if taken:
            continue
        Entity.objects.filter(pk=entity.pk).update(
            type=new_type,
            canonical_name=canonical,
            blocking_keys=entity_blocking_keys(entity.name, new_type.name),
        )


def distinct_fragments(fragments: Iterable[str], *, limit: int = 50) -> list[str]:
    seen: dict[str, str] = {}
    for fragment in fragments:
        text = " ".join(fragment.split())
        if text:
            seen.setdefault(text.casefold(), text)
        if len(seen) >= limit:
            break
    return list(seen.values())


def fragments_hash(fragments: Iterable[str]) -> str:
    """What an LLM summary was made from: the distinct fragments, in order."""
    return hashlib.sha256("\0".join(distinct_fragments(fragments)).encode()).hexdigest()


def _top_fragments(fragments: Iterable[str], *, limit: int = 3) -> str:
    return " ".join(distinct_fragments(fragments, limit=limit))[:2000]


def _keywords(keywords: Iterable[str], *, limit: int = 12) -> list[str]:
    return distinct_fragments((str(k) for k in keywords), limit=limit)


# --- Entry points ------------------------------------------------------------------------


@dataclass(slots=True)
class ExtractionReport:
    documents: int = 0
    windows: int = 0
    cached: int = 0
    extracted: int = 0
    skipped_for_budget: int = 0
    error: str = ""
    extractor: str = ""
    model: str = ""


def do_extract_documents(
    *,
    documents: list[Document],
    force: bool = False,
    progress: Progress | None = None,
    on_windows: Callable[[int], None] | None = None,
) -> ExtractionReport:
    """Extract the given documents (one source or several) and record their evidence.

    Returns what happened; a failed LLM leaves the failing windows without runs (nothing is
    cached) and the report's `error` set; budget stops are reported, not raised.
    """
    report = ExtractionReport()
    if not documents:
        return report
    extractor = get_extractor()
    report.extractor, report.model = extractor.kind, extractor.model_id
    by_source: dict[int, list[Document]] = {}
    for document in documents:
        by_source.setdefault(document.source_id, []).append(document)
    for source_id, docs in by_source.items():
        source = Source.objects.select_related("workspace").get(pk=source_id)
        do_ensure_default_schema(workspace=source.workspace)
        schema = get_schema_snapshot(source.workspace)
        windows_by_doc = {doc.pk: document_windows(doc) for doc in docs}
        all_windows = [w for ws in windows_by_doc.values() for w in ws]
        if on_windows:
            on_windows(len({w.hash for w in all_windows}))
        for doc in docs:
            doc.workspace = source.workspace
        writer = _Materializer(
            documents=docs,
            windows_by_doc=windows_by_doc,
            refresh_hashes={w.hash for w in all_windows} if force else set(),
            only_known=known_only(source),
        )
        ensured = _ensure_runs(
            source=source,
            windows=all_windows,
            extractor=extractor,
            schema=schema,
            force=force,
            progress=progress,
            idle=writer.write_ready,
        )
        report.documents += len(docs)
        report.windows += len(all_windows)
        report.cached += ensured.cached
        report.extracted += ensured.extracted
        report.skipped_for_budget += ensured.skipped_for_budget
        report.error = report.error or ensured.error
        writer.write_ready(ensured, final=True)
        account = SourceExtraction.objects.filter(source=source).first()
        if account is not None:
            _add_counts(account.pk, writer.counts)
        if extractor.kind == "llm":
            # Outside the writes' transactions: doubtful pairs and long descriptions go to
            # the LLM in batches.
            from knowledge.actions.consolidation import (
                do_review_suggestions_with_llm,
                do_summarize_descriptions,
            )

            if writer.counts.get("suggestions"):
                do_review_suggestions_with_llm(workspace=source.workspace, source=source)
            do_summarize_descriptions(
                workspace=source.workspace, entity_ids=writer.touched, source=source
            )
    return report


def _extract_stage_documents(document_ids: list[int]) -> None:
    documents = list(
        Document.objects.filter(pk__in=document_ids, status=DocumentStatus.EMBEDDED).order_by("pk")
    )
    if not documents:
        return
    try:
        report = do_extract_documents(documents=documents)
    except OfflineExtractorUnavailable as exc:
        # Like a missing embedding model: ingestion goes on, the graph waits, and the
        # source says why (`manage.py extract` fills it in once the model is back).
        warning = f"No extraction: {exc}"[:2000]
        Source.objects.filter(pk__in={d.source_id for d in documents}).update(warning=warning)
        report = ExtractionReport()
    if report.error:
        message = f"Extraction failed: {report.error}"[:2000]
        Document.objects.filter(pk__in=[d.pk for d in documents]).update(
            status=DocumentStatus.FAILED, error=message
        )
        if len(documents) == 1:
            raise StageFailed(message)
        return
    Document.objects.filter(
        pk__in=[d.pk for d in documents], status=DocumentStatus.EMBEDDED
    ).update(status=DocumentStatus.EXTRACTED)


def extract_group(*, document_ids: list[int]) -> None:
    """The group step of the extract stage: all windows of the group go out together."""
    _extract_stage_documents(document_ids)


def extract_document(*, document: Document) -> None:
    if document.status != DocumentStatus.EMBEDDED:
        return
    _extract_stage_documents([document.pk])
    document.refresh_from_db(fields=["status", "error"])


def do_forget_chunks(*, chunk_ids: list[int]) -> None:
    """Take back what chunks contributed before they are deleted (changed text, a gone
    page, a deleted source): their evidence goes and the entities and relations it touched
    are recomputed (deleted when nothing else supports them). Runs in the caller's
    transaction, so the graph and the chunks change together."""
    touched = Touched()
    _delete_evidence(
        Mention.objects.filter(chunk_id__in=chunk_ids),
        RelationEvidence.objects.filter(chunk_id__in=chunk_ids),
        touched,
    )
    if not touched.entities and not touched.relations:
        return
    # The chunks of one call belong to one workspace (a document's, a source's).
    workspace_id = Chunk.objects.filter(pk__in=chunk_ids).values_list("workspace_id", flat=True)[0]
    do_refresh_derived(
        workspace_id=workspace_id, entity_ids=touched.entities, relation_ids=touched.relations
    )


# --- Estimates -----------------------------------------------------------------------------


@dataclass(slots=True)
class Estimate:
    extractor: str
    model: str
    windows: int
    cached_windows: int
    windows_to_extract: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    budget: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "extractor": self.extractor,
            "model": self.model,
            "windows": self.windows,
            "cached_windows": self.cached_windows,
            "windows_to_extract": self.windows_to_extract,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "cost": self.cost,
            "budget": self.budget,
        }


# Completion tokens are guessed as this share of the prompt's (extraction replies are
# shorter than their input; gleaning turns shorter still). Documented in operations.md.
COMPLETION_RATIO = 0.35


def estimate_source(*, source: Source, force: bool = False) -> Estimate:
    """Tokens and cost of extracting the source's documents now, without calling anything:
    cached windows cost nothing; each other window costs its prompt (with the schema) per
    turn, gleaning turns resending the conversation."""
    from knowledge.extraction.llm import estimate_tokens

    extractor = get_extractor()
    do_ensure_default_schema(workspace=source.workspace)
    schema = get_schema_snapshot(source.workspace)
    windows: dict[str, Window] = {}
    for document in Document.objects.filter(source=source).exclude(
        status__in=[DocumentStatus.FAILED, DocumentStatus.CANCELLED]
    ):
        for window in document_windows(document):
            windows.setdefault(window.hash, window)
    cached: set[str] = set()
    if not force:
        cached = set(
            ExtractionRun.objects.filter(
                workspace_id=source.workspace_id,
                window_hash__in=list(windows),
                prompt_version=extractor.prompt_version,
                model=extractor.model_id,
                schema_hash=schema.hash,
            ).values_list("window_hash", flat=True)
        )
    prompt = completion = 0
    if extractor.kind == "llm":
        from knowledge.extraction.extractors import LlmExtractor

        assert isinstance(extractor, LlmExtractor)
        passes = extractor.gleaning_passes + 1
        for digest, window in windows.items():
            if digest in cached:
                continue
            base = extractor.prompt_tokens(window.text, schema=schema)
            reply = int(estimate_tokens(window.text) * COMPLETION_RATIO)
            for turn in range(passes):
                prompt += base + turn * (reply + estimate_tokens(extractor.prompts.glean))
                completion += reply if turn == 0 else reply // 3
    return Estimate(
        extractor=extractor.kind,
        model=extractor.model_id,
        windows=len(windows),
        cached_windows=len(cached),
        windows_to_extract=len(windows) - len(cached),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=float(llm_cost(prompt, completion)),
        budget=source_budget(source),
    )


def do_extract_source(
    *,
    source: Source,
    force: bool = False,
    progress: Progress | None = None,
    on_windows: Callable[[int], None] | None = None,
) -> ExtractionReport:
    """(Re-)extract a source's processed documents: cached windows cost nothing, so this is
    how a source continues after its budget was raised or its LLM came back."""
    from knowledge.selectors.extraction import documents_for_extraction

    documents = documents_for_extraction(workspace=source.workspace, source=source)
    if source_budget(source) is not None:
        SourceExtraction.objects.filter(
            source=source, status=ExtractionStatus.BUDGET_EXCEEDED
        ).update(status=ExtractionStatus.RUNNING, message="")
    SourceExtraction.objects.filter(source=source, status=ExtractionStatus.FAILED).update(
        status=ExtractionStatus.RUNNING, message=""
    )
    report = do_extract_documents(
        documents=documents, force=force, progress=progress, on_windows=on_windows
    )
    if not report.error and not report.skipped_for_budget:
        SourceExtraction.objects.filter(source=source).update(
            status=ExtractionStatus.DONE, finished_at=timezone.now()
        )
        Source.objects.filter(pk=source.pk, warning__startswith="Stopped: the token budget").update(
            warning=""
        )
    return report


def do_request_extraction(*, source: Source, force: bool = False) -> None:
    """Queue `do_extract_source` for the worker (after commit)."""
    from functools import partial

    def enqueue(source_id: int, force: bool) -> None:
        from knowledge.tasks import extract_source

        extract_source.enqueue(source_id, force)

    transaction.on_commit(partial(enqueue, source.pk, force))
