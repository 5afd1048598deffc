"""Pruning (`do_prune`, `manage.py prune`) and `manage.py stats`: a dry run deletes
nothing, a real run deletes exactly the old, never-retrieved chunks that are evidence for
nothing, in this workspace only, and orphan entities are reported, never deleted."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from ingest.models import Chunk
from knowledge.actions.maintenance import do_prune, parse_age
from knowledge.models import Entity, Mention, RelationEvidence
from tests.knowledge.graph_data import make_graph
from workspaces.errors import InvalidInput

OLD = timezone.now() - timedelta(days=200)


def extra_chunk(built, ordinal: int, *, age_days: int, retrieved: int = 0) -> Chunk:
    """Another chunk of the fixture document (its text is the document's own)."""
    document = built.document
    chunk = Chunk.objects.create(
        workspace=document.workspace,
        document=document,
        ordinal=ordinal,
        text=document.text[:10],
        char_start=0,
        char_end=10,
        token_count=2,
        content_hash=f"extra-{ordinal}",
        retrieved_count=retrieved,
    )
    Chunk.objects.filter(pk=chunk.pk).update(created_at=timezone.now() - timedelta(days=age_days))
    return chunk


@pytest.fixture
def chunks(alice, bob):
    """In acme: one chunk of each kind; in globex, one that would be eligible in acme."""
    built = make_graph(
        alice.workspace,
        entities={"Ada Lovelace": "person", "Analytical Engine": "technology"},
        relations=[("Ada Lovelace", "Analytical Engine", "related_to")],
    )
    Chunk.objects.filter(pk=built.chunk.pk).update(created_at=OLD)  # old, but has mentions
    evidence_only = extra_chunk(built, 1, age_days=200)
    RelationEvidence.objects.filter(relation=built.relations[0]).update(chunk=evidence_only)
    stranger = make_graph(bob.workspace, entities={"Initech": "organization"})
    return {
        "mentioned": built.chunk,
        "evidence_only": evidence_only,
        "eligible": [extra_chunk(built, 2, age_days=200), extra_chunk(built, 3, age_days=91)],
        "retrieved": extra_chunk(built, 4, age_days=200, retrieved=3),
        "young": extra_chunk(built, 5, age_days=10),
        "foreign": extra_chunk(stranger, 1, age_days=200),
        "built": built,
    }


def surviving(*chunks: Chunk) -> set[int]:
    return set(Chunk.objects.filter(pk__in=[c.pk for c in chunks]).values_list("pk", flat=True))


def every(chunks) -> list[Chunk]:
    return [
        chunks["mentioned"], chunks["evidence_only"], *chunks["eligible"], chunks["retrieved"],
        chunks["young"], chunks["foreign"],
    ]  # fmt: skip


def test_a_dry_run_counts_and_deletes_nothing(alice, chunks):
    before = surviving(*every(chunks))
    report = do_prune(workspace=alice.workspace, older_than=timedelta(days=90), dry_run=True)
    assert report.dry_run is True
    assert report.chunks_eligible == 2
    assert report.chunks_deleted == 0
    assert report.documents_touched == 1
    assert surviving(*every(chunks)) == before


def test_prune_deletes_exactly_the_old_unretrieved_chunks_that_are_no_evidence(alice, chunks):
    mentions = Mention.objects.count()
    evidence = RelationEvidence.objects.count()
    report = do_prune(workspace=alice.workspace, older_than=timedelta(days=90), batch_size=1)
    assert report.chunks_eligible == 2
    assert report.chunks_deleted == 2
    gone = {c.pk for c in chunks["eligible"]}
    kept = {c.pk for c in every(chunks)} - gone
    assert surviving(*every(chunks)) == kept
    assert Mention.objects.count() == mentions
    assert RelationEvidence.objects.count() == evidence
    source = chunks["built"].source
    source.refresh_from_db()
    assert source.counters["chunks"] == Chunk.objects.filter(document__source=source).count()
    again = do_prune(workspace=alice.workspace, older_than=timedelta(days=90))
    assert again.chunks_deleted == 0


def test_the_age_decides_which_old_chunks_go(alice, chunks):
    report = do_prune(workspace=alice.workspace, older_than=timedelta(days=100))
    assert report.chunks_deleted == 1
    assert surviving(*chunks["eligible"]) == {chunks["eligible"][1].pk}  # 91 days old stays


def test_orphan_entities_are_reported_and_kept(alice, chunks):
    orphan = Entity.objects.create(
        workspace=alice.workspace,
        name="Charles Babbage",
        canonical_name="charles babbage",
        type=chunks["built"].entities["Ada Lovelace"].type,
        curated=True,
    )
    report = do_prune(workspace=alice.workspace, older_than=timedelta(days=90))
    assert report.orphan_entities == 1
    assert report.orphans == [{"id": orphan.pk, "name": "Charles Babbage", "type": "person"}]
    assert Entity.objects.filter(pk=orphan.pk, state="active").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90d", timedelta(days=90)),
        ("12h", timedelta(hours=12)),
        ("30m", timedelta(minutes=30)),
        (" 7D ", timedelta(days=7)),
    ],
)
def test_ages_read_days_hours_and_minutes(text, expected):
    assert parse_age(text) == expected


@pytest.mark.parametrize("text", ["90", "d", "0d", "-5d", "1.5d", "90 days", "3w", "9999999d", ""])
def test_unreadable_ages_are_refused_with_the_expected_form(text):
    with pytest.raises(InvalidInput, match=r"e\.g\. 90d, 12h, 30m"):
        parse_age(text)


# --- manage.py prune / stats --------------------------------------------------------------------


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_prune_command_dry_run_then_real_run(alice, chunks):
    dry = json.loads(
        run("prune", "--workspace", "acme", "--older-than", "90d", "--dry-run", "--json")
    )
    assert dry["dry_run"] is True
    assert dry["chunks_eligible"] == 2
    assert dry["chunks_deleted"] == 0
    assert len(surviving(*chunks["eligible"])) == 2

    text = run("prune", "--workspace", "acme", "--older-than", "90d")
    assert text.startswith("2 chunk(s) in 1 document(s) deleted")
    assert "0 orphan entities" in text
    assert surviving(*chunks["eligible"]) == set()
    assert surviving(chunks["foreign"]) == {chunks["foreign"].pk}


def test_prune_command_lists_orphans_with_hostile_names_quoted(alice, chunks):
    Entity.objects.create(
        workspace=alice.workspace,
        name="Evil\nName\x1b[31m",
        canonical_name="evil name",
        type=chunks["built"].entities["Ada Lovelace"].type,
    )
    text = run("prune", "--workspace", "acme", "--older-than", "12h", "--dry-run")
    assert "1 orphan entity" in text
    assert "'Evil\\nName\\x1b[31m'" in text
    assert "\x1b" not in text


def test_prune_command_exit_codes(alice):
    with pytest.raises(CommandError) as unknown:
        run("prune", "--workspace", "nope", "--older-than", "90d")
    assert unknown.value.returncode == 2
    with pytest.raises(CommandError) as unreadable:
        run("prune", "--workspace", "acme", "--older-than", "90 days")
    assert unreadable.value.returncode == 2
    assert "90d, 12h, 30m" in str(unreadable.value)


def test_stats_command_prints_the_api_numbers(alice, chunks):
    api = alice.client().get("/api/v1/workspaces/acme/stats").json()
    as_json = json.loads(run("stats", "--workspace", "acme", "--json"))
    assert as_json == api
    assert as_json["entities"] == 2
    assert as_json["relations"] == 1
    text = run("stats", "--workspace", "acme")
    assert "Entities: 2 active — person 1, technology 1" in text
    assert "Relations: 1 active — related_to 1" in text
    assert "6 chunk(s)" in text
    with pytest.raises(CommandError) as unknown:
        run("stats", "--workspace", "nope")
    assert unknown.value.returncode == 2
