"""What the knowledge app plugs into the seams of the apps below it, all in one place:
each function here is named by a dotted path in settings (config/settings/base.py), which
the lower app loads lazily, never importing knowledge. Its pipeline stages are in
knowledge/stages.py.

- INGEST_DELETION_HOOKS: `forget_chunks` takes back the evidence of chunks before the
  ingest app deletes them; INGEST_CHUNK_MOVE_HOOKS: `chunks_moved` refreshes what derives
  from its chunks' documents after chunks moved to another one.
- WORKSPACE_DELETION_HOOKS: `purge_workspace`, the app's rows and graph projections.
- HEALTH_COUNTS (system/selectors.py): `vector_counts`; METRICS_COLLECTORS
  (system/metrics.py): `llm_usage_metrics`.
- INGEST_SOURCE_FIGURES (ingest/selectors.py, the sources lists): `source_figures`, the
  entities each source's documents gave.
- UPKEEP_JOBS (system/upkeep.py): what used to wait for someone to run a command. Each job
  goes over every workspace, returns a `JobOutcome` whose message counts (it is public:
  /api/v1/health) and whose details name the workspaces (the staff status page), and
  carries on past a workspace that fails, reporting the run failed at the end.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any

from django.conf import settings
from prometheus_client.core import Metric

from ingest import hooks as ingest_hooks
from ingest.actions.vector_indexes import do_drop_workspace_vector_indexes
from ingest.embeddings import EmbeddingUnavailable, configured_model_id, get_embedder
from ingest.vector_tables import CHUNK_VECTORS
from knowledge.actions.communities import do_request_communities
from knowledge.actions.embeddings import (
    do_backfill_entity_embeddings,
    do_ensure_entity_vector_index,
)
from knowledge.actions.evidence import do_forget_chunks, do_refresh_moved_chunks
from knowledge.actions.maintenance import do_prune, parse_age
from knowledge.actions.review import do_review_suggestions_with_llm
from knowledge.graph import get_graph_backend
from knowledge.graph.sync import projection_aliases
from knowledge.models import ENTITY_VECTORS
from knowledge.selectors import llm_usage, vectors
from knowledge.selectors.community_map import computation_pending, last_run
from knowledge.selectors.source_graph import entity_counts_by_source
from knowledge.selectors.upkeep import (
    graph_changes_since,
    review_spent_this_month,
    workspaces_with_unjudged_suggestions,
)
from knowledge.selectors.vectors import get_entities_needing_vectors
from system.llm.availability import extraction_uses_llm
from system.upkeep import JobOutcome
from workspaces.actions.workspaces import DeletionProgress, purge_workspace_rows, tenant_models
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

# --- chunks deleted or moved by ingest (INGEST_DELETION_HOOKS, INGEST_CHUNK_MOVE_HOOKS) ----


def forget_chunks(*, chunk_ids: list[int]) -> None:
    do_forget_chunks(chunk_ids=chunk_ids)


def chunks_moved(*, chunk_ids: list[int]) -> None:
    do_refresh_moved_chunks(chunk_ids=chunk_ids)


# --- workspace deletion (WORKSPACE_DELETION_HOOKS) -----------------------------------------


def purge_workspace(
    *, workspace_id: int, batch_size: int, progress: DeletionProgress | None = None
) -> None:
    """Delete the workspace's knowledge rows in batches, children first (evidence and
    mentions, relations, entities, and the types their PROTECTed foreign keys hold last),
    then clear its graph projections, after the rows: a write-through that slipped in
    meanwhile finds nothing left to push. A projection that cannot be cleared raises: the
    deletion stops there and the next run (resumable) clears it. Last, the workspace's own
    name vector index, if it had one."""
    purge_workspace_rows(
        workspace_id=workspace_id,
        models=tenant_models("knowledge"),
        batch_size=batch_size,
        progress=progress,
    )
    for alias in projection_aliases():
        get_graph_backend(alias).clear_workspace(workspace_id=workspace_id)
    do_drop_workspace_vector_indexes(workspace_id=workspace_id, vectors=ENTITY_VECTORS)


# --- what sources gave (INGEST_SOURCE_FIGURES) ---------------------------------------------


def source_figures(*, workspace_id: int, source_ids: list[int]) -> dict[int, dict[str, int]]:
    """Source id -> {"entities": active entities its documents mention}, for a page of
    sources in one query."""
    counts = entity_counts_by_source(workspace_id=workspace_id, source_ids=source_ids)
    return {source_id: {"entities": counts.get(source_id, 0)} for source_id in source_ids}


# --- health and metrics (HEALTH_COUNTS, METRICS_COLLECTORS) --------------------------------


def vector_counts() -> dict[str, int]:
    """Entities of every workspace without a name vector, and with one from another model
    than the configured one: what `manage.py backfill_embeddings` still has to compute."""
    return vectors.vector_counts()


def llm_usage_metrics() -> Iterator[Metric]:
    """LLM calls, tokens and cost by purpose, counted from LlmCall rows at scrape time."""
    return llm_usage.llm_usage_metrics()


# --- scheduled upkeep (UPKEEP_JOBS) --------------------------------------------------------


def _over_workspaces(
    workspaces: Iterable[Workspace], work: Callable[[Workspace], dict[str, Any] | None]
) -> tuple[dict[str, Any], list[str]]:
    """({slug: what `work` reported, for those it reported on}, slugs that failed); a
    workspace's failure is logged and recorded, and the next workspace still gets its turn."""
    details: dict[str, Any] = {}
    failed: list[str] = []
    for workspace in workspaces:
        try:
            report = work(workspace)
        except Exception as exc:
            logger.exception("Upkeep failed for workspace %s", workspace.slug)
            details[workspace.slug] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            failed.append(workspace.slug)
            continue
        if report is not None:
            details[workspace.slug] = report
    return details, failed


def _finish(message: str, details: dict[str, Any], failed: list[str]) -> JobOutcome:
    if failed:
        return JobOutcome.failed(f"{message}; failed in {len(failed)} workspace(s)", details)
    return JobOutcome.ok(message, details)


# --- the LLM's review of open merge suggestions --------------------------------------------


def review_merge_suggestions() -> JobOutcome:
    """Put the open merge suggestions no LLM has judged to the LLM, as the ingest does for
    new ones (knowledge/actions/review.py): at most CONSOLIDATION_LLM_MAX_PAIRS per
    workspace and run, and none for a workspace whose review spend this month reached
    UPKEEP_LLM_REVIEW_MONTHLY_BUDGET. Skipped without an LLM."""
    if not extraction_uses_llm():
        return JobOutcome.skipped("no LLM configured")
    budget = Decimal(str(settings.UPKEEP_LLM_REVIEW_MONTHLY_BUDGET))
    totals = {"asked": 0, "same": 0, "different": 0, "unsure": 0, "over_budget": 0}

    def review(workspace: Workspace) -> dict[str, Any]:
        if budget > 0 and review_spent_this_month(workspace) >= budget:
            totals["over_budget"] += 1
            return {"over_budget": True}
        report = do_review_suggestions_with_llm(workspace=workspace)
        if report.error:
            raise RuntimeError(f"the LLM failed: {report.error}")
        for key in ("asked", "same", "different", "unsure"):
            totals[key] += getattr(report, key)
        return {k: getattr(report, k) for k in ("asked", "same", "different", "unsure")}

    details, failed = _over_workspaces(workspaces_with_unjudged_suggestions(), review)
    message = (
        f"{totals['asked']} pair(s) judged in {len(details) - totals['over_budget']} "
        f"workspace(s): {totals['same']} merged, {totals['different']} rejected, "
        f"{totals['unsure']} left for a person"
    )
    if totals["over_budget"]:
        message += f"; {totals['over_budget']} workspace(s) over their monthly review budget"
    return _finish(message, details, failed)


# --- communities ---------------------------------------------------------------------------


def changed_enough(changes: int, size_then: int) -> bool:
    """At least UPKEEP_COMMUNITIES_MIN_CHANGES entities and relations added or removed, and
    at least UPKEEP_COMMUNITIES_MIN_SHARE of the graph the map was computed from: a small
    edit does not recompute a large graph, nor a new workspace of three entities get a map."""
    needed = max(
        settings.UPKEEP_COMMUNITIES_MIN_CHANGES,
        math.ceil(settings.UPKEEP_COMMUNITIES_MIN_SHARE * size_then),
        1,
    )
    return changes >= needed


def recompute_communities() -> JobOutcome:
    """Queue the community computation (knowledge.tasks.compute_communities, which also
    refreshes the LLM's summaries) of each workspace whose graph changed enough since its
    map (`changed_enough`), unless one is queued or running already."""
    counts = {"queued": 0, "pending": 0, "unchanged": 0}

    def check(workspace: Workspace) -> dict[str, Any] | None:
        changes, size_then = graph_changes_since(workspace, last_run(workspace))
        if not changed_enough(changes, size_then):
            counts["unchanged"] += 1
            return None
        queued = not computation_pending(workspace) and do_request_communities(workspace=workspace)
        counts["queued" if queued else "pending"] += 1
        return {"changes": changes, "size_then": size_then, "queued": queued}

    details, failed = _over_workspaces(Workspace.objects.order_by("slug"), check)
    message = (
        f"recomputation queued for {counts['queued']} workspace(s) "
        f"({counts['pending']} already under way); {counts['unchanged']} unchanged enough"
    )
    return _finish(message, details, failed)


# --- entity name vectors -------------------------------------------------------------------


def backfill_entity_vectors() -> JobOutcome:
    """Give the entities without a name vector from the configured model one (what
    `manage.py backfill_embeddings` does for entities; chunks stay with the command: a new
    model re-embeds every chunk, a decision for a person). Fails while the embedding model
    is unavailable. The workspaces with entities to fill are found under the configured
    model's id before the model is loaded: most runs find none, and loading it costs a
    worker torch's import and a few hundred megabytes it would then keep for nothing."""
    model_id = configured_model_id()
    workspaces = list(Workspace.objects.order_by("slug"))
    if model_id is not None:
        workspaces = [
            workspace
            for workspace in workspaces
            if get_entities_needing_vectors(workspace, model_id=model_id).exists()
        ]
        if not workspaces:
            return _finish("0 entity name vector(s) computed in 0 workspace(s)", {}, [])
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable as exc:
        return JobOutcome.failed(
            "the embedding model is unavailable", {"error": f"{type(exc).__name__}: {exc}"}
        )
    total = 0

    def backfill(workspace: Workspace) -> dict[str, Any] | None:
        nonlocal total
        names = get_entities_needing_vectors(workspace, model_id=embedder.model_id)
        written = do_backfill_entity_embeddings(entities=names)
        if not written:
            return None
        total += written
        return {"entities": written}

    details, failed = _over_workspaces(workspaces, backfill)
    if total:
        do_ensure_entity_vector_index(dimension=embedder.dimension)
    message = f"{total} entity name vector(s) computed in {len(details)} workspace(s)"
    return _finish(message, details, failed)


# --- the weekly prune report ---------------------------------------------------------------


def prune_report() -> JobOutcome:
    """What `manage.py prune --older-than UPKEEP_PRUNE_OLDER_THAN --dry-run` would delete in
    each workspace, and its orphan entities; deletes nothing (pruning stays a person's
    decision). The figures per workspace are kept in the job's details."""
    label = settings.UPKEEP_PRUNE_OLDER_THAN
    age = parse_age(label)
    totals = {"chunks": 0, "orphans": 0}

    def report(workspace: Workspace) -> dict[str, Any] | None:
        found = do_prune(workspace=workspace, older_than=age, dry_run=True, label=label)
        totals["chunks"] += found.chunks_eligible
        totals["orphans"] += found.orphan_entities
        if not found.chunks_eligible and not found.orphan_entities:
            return None
        return found.as_dict()

    details, failed = _over_workspaces(Workspace.objects.order_by("slug"), report)
    message = (
        f"{totals['chunks']} chunk(s) older than {label} prunable and {totals['orphans']} "
        f"orphan entit{'y' if totals['orphans'] == 1 else 'ies'}, in {len(details)} "
        "workspace(s) (dry run: nothing deleted; `manage.py prune` deletes)"
    )
    return _finish(message, details, failed)


def maintain_vector_indexes() -> JobOutcome:
    """Workspace indexes of chunk and entity-name vectors (ingest/hooks.py's rules for
    both tables: a workspace above VECTOR_EXACT_MAX_ROWS rows and at most
    VECTOR_WORKSPACE_INDEX_MAX_SHARE of the table gets an HNSW index of its own rows)."""
    return ingest_hooks.maintain_vector_indexes((CHUNK_VECTORS, ENTITY_VECTORS))
