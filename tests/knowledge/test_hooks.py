"""The knowledge app's scheduled upkeep jobs (knowledge/hooks.py), called in process: when
communities are recomputed, the LLM's review within its budget or skipped without an LLM,
entity vectors filled in, and the prune report that deletes nothing."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ingest.models import Chunk
from knowledge.actions.communities import COMPUTE_TASK, do_compute_communities
from knowledge.hooks import (
    backfill_entity_vectors,
    changed_enough,
    prune_report,
    recompute_communities,
    review_merge_suggestions,
)
from knowledge.models import Entity, LlmCall, MergeSuggestion
from tests.knowledge.community_data import Planted, two_cliques
from tests.knowledge.graph_data import make_graph
from tests.llm_server import Reply
from workspaces.actions.workspaces import do_create_workspace

pytestmark = pytest.mark.django_db


def computations_queued(workspace) -> int:
    return DBTaskResult.objects.filter(
        task_path=COMPUTE_TASK, args_kwargs__args__0=workspace.pk
    ).count()


@pytest.mark.parametrize(
    ("changes", "size_then", "expected"),
    [
        (0, 0, False),
        (49, 0, False),  # a new workspace of a few entities waits for more
        (50, 0, True),
        (50, 1000, True),
        (99, 10_000, False),  # 1% of a large graph, not just 50
        (100, 10_000, True),
    ],
)
def test_changed_enough_needs_both_the_count_and_the_share(changes, size_then, expected):
    assert changed_enough(changes, size_then) is expected


def test_communities_are_requested_for_a_changed_workspace_and_not_an_unchanged_one(settings):
    settings.UPKEEP_COMMUNITIES_MIN_CHANGES = 5
    changed = do_create_workspace(slug="gamma")
    unchanged = do_create_workspace(slug="delta")
    two_cliques(changed)
    graph = two_cliques(unchanged)
    do_compute_communities(workspace=unchanged)
    graph.entities("newcomer")  # one change: under the threshold

    outcome = recompute_communities()

    assert outcome.kind == "ok"
    assert computations_queued(changed) == 1
    assert computations_queued(unchanged) == 0
    assert set(outcome.details) == {"gamma"}
    assert "gamma" not in outcome.message  # the message is public: counts only
    assert outcome.message.startswith("recomputation queued for 1 workspace(s)")
    assert recompute_communities().message.startswith(
        "recomputation queued for 0 workspace(s) (1 already under way)"
    )


def test_removed_entities_count_as_changes(settings):
    settings.UPKEEP_COMMUNITIES_MIN_CHANGES = 5
    workspace = do_create_workspace(slug="shrinking")
    two_cliques(workspace)
    do_compute_communities(workspace=workspace)
    Entity.objects.filter(name__in=["a0", "a1"]).update(state="deleted")
    recompute_communities()
    # Two entities leave (their relations' rows stay active): 2 changes, under 5.
    assert computations_queued(workspace) == 0
    Entity.objects.filter(name__in=["b0", "b1", "b2"]).update(state="deleted")
    recompute_communities()
    assert computations_queued(workspace) == 1


def test_the_llm_review_is_skipped_without_an_llm():
    outcome = review_merge_suggestions()
    assert (outcome.kind, outcome.message) == ("skipped", "no LLM configured")


def suggest(workspace, *names: str) -> MergeSuggestion:
    graph = two_cliques(workspace)
    a, b = sorted(graph.ids[name] for name in names)
    return MergeSuggestion.objects.create(
        workspace=workspace, entity_a_id=a, entity_b_id=b, score=0.8
    )


def test_the_llm_reviews_open_suggestions_until_the_monthly_budget_is_spent(llm, settings):
    settings.UPKEEP_LLM_REVIEW_MONTHLY_BUDGET = 0.5
    settings.LLM_PRICE_INPUT_PER_MTOK = 1000.0
    workspace = do_create_workspace(slug="acme")
    suggestion = suggest(workspace, "a0", "b0")
    llm.script(Reply(content="1: different — other people"))

    outcome = review_merge_suggestions()

    assert outcome.kind == "ok"
    assert outcome.message.startswith("1 pair(s) judged in 1 workspace(s): 0 merged, 1 rejected")
    suggestion.refresh_from_db()
    assert suggestion.llm_verdict == "different"
    assert len(llm.requests) == 1

    other = MergeSuggestion.objects.create(
        workspace=workspace,
        entity_a_id=suggestion.entity_a_id,
        entity_b_id=Entity.objects.get(name="b1").pk,
        score=0.8,
    )
    LlmCall.objects.create(workspace=workspace, purpose="review", model="m", cost=Decimal("0.5"))
    outcome = review_merge_suggestions()
    assert "1 workspace(s) over their monthly review budget" in outcome.message
    assert outcome.details == {"acme": {"over_budget": True}}
    assert len(llm.requests) == 1
    other.refresh_from_db()
    assert other.llm_verdict == ""


def test_a_failing_llm_fails_the_run_and_names_the_workspace_in_the_details_only(llm):
    workspace = do_create_workspace(slug="acme")
    suggest(workspace, "a0", "b0")
    llm.script(*[Reply(status=500, content="down")] * 10)
    outcome = review_merge_suggestions()
    assert outcome.kind == "failed"
    assert outcome.message.endswith("failed in 1 workspace(s)")
    assert "the LLM failed" in outcome.details["acme"]["error"]


def test_the_backfill_gives_entities_without_a_vector_one():
    workspace = do_create_workspace(slug="acme")
    two_cliques(workspace)
    assert Entity.objects.filter(embedding__isnull=True).count() == 13

    outcome = backfill_entity_vectors()

    assert outcome.kind == "ok"
    assert outcome.message == "13 entity name vector(s) computed in 1 workspace(s)"
    assert not Entity.objects.filter(embedding__isnull=True).exists()
    assert backfill_entity_vectors().message.startswith("0 entity name vector(s)")


def test_the_backfill_loads_the_model_only_when_an_entity_needs_a_vector(settings):
    """A model that cannot load does not fail a run with nothing to do (so a run with
    nothing to do never loaded it), and fails the run that needs it."""
    workspace = do_create_workspace(slug="acme")
    settings.EMBEDDING_MODEL = "/nonexistent/embedding-model"

    assert backfill_entity_vectors().kind == "ok"

    Planted(workspace).entities("Lonely")
    outcome = backfill_entity_vectors()
    assert outcome.kind == "failed"
    assert outcome.message == "the embedding model is unavailable"


def test_the_prune_report_counts_what_a_prune_would_delete_and_deletes_nothing(alice, settings):
    settings.UPKEEP_PRUNE_OLDER_THAN = "30d"
    built = make_graph(alice.workspace, entities={"Ada Lovelace": "person"})
    document = built.document
    old = Chunk.objects.create(
        workspace=document.workspace, document=document, ordinal=1, text=document.text[:10],
        char_start=0, char_end=10, token_count=2, content_hash="old",
    )  # fmt: skip
    Chunk.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))
    Planted(alice.workspace).entities("Lonely")

    outcome = prune_report()

    assert outcome.kind == "ok"
    assert outcome.message.startswith(
        "1 chunk(s) older than 30d prunable and 1 orphan entity, in 1 workspace(s)"
    )
    report = outcome.details[alice.workspace.slug]
    assert (report["dry_run"], report["chunks_eligible"]) == (True, 1)
    assert [orphan["name"] for orphan in report["orphans"]] == ["Lonely"]
    assert Chunk.objects.filter(pk=old.pk).exists()
