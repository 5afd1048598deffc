"""Entity search (knowledge/selectors/entities.py, migration 0014): any word of a name or
alias by prefix, one typo forgiven in words of 4+ characters, ranked exact > name prefix >
word prefix > typo, ties by degree then mentions; the words stay current through every
write (create, rename, aliases, merge, unmerge, delete) because PostgreSQL keeps them."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.db import connection

from knowledge.actions.curation.entities import do_add_alias, do_remove_alias, do_rename_entity
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.models import Entity, EntityWord, WordTypoKey
from knowledge.selectors.entities import (
    RANK_EXACT,
    RANK_PREFIX,
    RANK_TYPO,
    RANK_WORDS,
    search_entities,
)
from tests.knowledge.graph_data import make_graph

NAMES = {
    "Jonas Lindqvist": "person",
    "Hannah Berg": "person",
    "Kestrel Navigation System": "product",
    "Helios Robotics Inc.": "organization",
    "Zürich Insurance": "organization",
}


@pytest.fixture
def graph(alice):
    return make_graph(alice.workspace, entities=NAMES).entities


def found(workspace, q: str, **options) -> list[str]:
    return [e.name for e in search_entities(workspace, q=q, **options)]


def test_a_surname_or_any_later_word_finds_the_entity(alice, graph):
    assert found(alice.workspace, "Lindqvist") == ["Jonas Lindqvist"]
    assert found(alice.workspace, "navigation") == ["Kestrel Navigation System"]
    assert found(alice.workspace, "robotics") == ["Helios Robotics Inc."]
    # Case, accents and punctuation do not matter.
    assert found(alice.workspace, "ZURICH") == ["Zürich Insurance"]
    assert found(alice.workspace, "insurance,") == ["Zürich Insurance"]


def test_the_start_of_any_word_finds_the_entity(alice, graph):
    assert found(alice.workspace, "lindq") == ["Jonas Lindqvist"]
    assert found(alice.workspace, "syst") == ["Kestrel Navigation System"]
    # Every word of the query must start a word of the name, in any order.
    assert found(alice.workspace, "lindqvist jon") == ["Jonas Lindqvist"]
    assert found(alice.workspace, "lindqvist hannah") == []
    # The whole-name prefix alone: match=prefix.
    assert found(alice.workspace, "lindq", match="prefix") == []
    assert found(alice.workspace, "jonas lin", match="prefix") == ["Jonas Lindqvist"]


def test_one_typo_is_forgiven_in_words_of_four_or_more_characters(alice, graph):
    for typo in ("Lindqvst", "Lindkvist", "Lindqvisst", "Lindqivst", "kestral"):
        assert found(alice.workspace, typo), typo
    assert found(alice.workspace, "Lindkvist") == ["Jonas Lindqvist"]
    assert found(alice.workspace, "Berq") == ["Hannah Berg"]  # four characters
    assert found(alice.workspace, "Lindkvust") == []  # two typos
    assert found(alice.workspace, "Jnas") == ["Jonas Lindqvist"]
    # Shorter than four characters: no typo forgiven ("Hel" is a prefix, "Hwl" nothing).
    assert found(alice.workspace, "Hwl") == []
    assert found(alice.workspace, "Hel") == ["Helios Robotics Inc."]
    # Only with match=words.
    assert found(alice.workspace, "Lindkvist", match="prefix") == []


def test_results_rank_exact_then_prefix_then_word_then_typo(alice, graph):
    extra = make_graph(
        alice.workspace,
        entities={
            "Lindqvist": "organization",
            "Lindqvist Consulting": "organization",
            "Anna Lindkvist": "person",
        },
        relations=[("Lindqvist Consulting", "Anna Lindkvist", "employs")],
        path="more.txt",
    ).entities
    results = list(search_entities(alice.workspace, q="lindqvist"))
    assert [(e.name, e.search_rank) for e in results] == [  # type: ignore[attr-defined]
        ("Lindqvist", RANK_EXACT),
        ("Lindqvist Consulting", RANK_PREFIX),
        ("Jonas Lindqvist", RANK_WORDS),
        ("Anna Lindkvist", RANK_TYPO),
    ]
    assert extra["Anna Lindkvist"].pk == results[-1].pk
    # An explicit order still applies to the same matches.
    assert found(alice.workspace, "lindqvist", order="name") == [
        "Anna Lindkvist", "Jonas Lindqvist", "Lindqvist", "Lindqvist Consulting",
    ]  # fmt: skip


def test_ties_go_to_the_most_connected_then_the_most_mentioned(alice):
    built = make_graph(
        alice.workspace,
        entities={
            "Ada Berg": "person",
            "Bo Berg": "person",
            "Cy Berg": "person",
            "Berg Works": "organization",
        },
        relations=[("Cy Berg", "Berg Works", "works_at")],
    ).entities
    Entity.objects.filter(pk=built["Bo Berg"].pk).update(mention_count=5)
    # "Berg Works" starts with the query: ahead of every word match.
    assert found(alice.workspace, "berg") == ["Berg Works", "Cy Berg", "Bo Berg", "Ada Berg"]


def test_alias_words_are_searched_and_follow_the_alias_table(alice, graph):
    kns = graph["Kestrel Navigation System"]
    assert found(alice.workspace, "KNS") == []
    do_add_alias(workspace=alice.workspace, entity_id=kns.pk, name="KNS Pathfinder")
    assert found(alice.workspace, "kns") == ["Kestrel Navigation System"]
    assert found(alice.workspace, "pathfindr") == ["Kestrel Navigation System"]
    do_remove_alias(workspace=alice.workspace, entity_id=kns.pk, name="KNS Pathfinder")
    assert found(alice.workspace, "pathfinder") == []


def test_search_follows_a_rename(alice, graph):
    jonas = graph["Jonas Lindqvist"]
    do_rename_entity(workspace=alice.workspace, entity_id=jonas.pk, name="Jonas Lindgren")
    assert found(alice.workspace, "lindgren") == ["Jonas Lindgren"]
    # The old name stays an alias, and is found as one.
    assert found(alice.workspace, "lindqvist") == ["Jonas Lindgren"]
    do_remove_alias(workspace=alice.workspace, entity_id=jonas.pk, name="Jonas Lindqvist")
    assert found(alice.workspace, "lindqvist") == []
    assert found(alice.workspace, "Lindgrem") == ["Jonas Lindgren"]


def test_search_follows_a_merge_and_its_undo(alice, graph):
    short = make_graph(alice.workspace, entities={"Kestrel Nav": "product"}, path="b.txt")
    nav = short.entities["Kestrel Nav"]
    kns = graph["Kestrel Navigation System"]
    assert found(alice.workspace, "kestrel") == ["Kestrel Nav", "Kestrel Navigation System"]
    event = do_merge_entities(workspace=alice.workspace, survivor_id=kns.pk, merged_ids=[nav.pk])
    assert found(alice.workspace, "kestrel nav") == ["Kestrel Navigation System"]
    assert found(alice.workspace, "kestrel nav", state="merged") == ["Kestrel Nav"]
    do_unmerge(workspace=alice.workspace, event_id=event.pk)
    assert found(alice.workspace, "kestrel nav")[0] == "Kestrel Nav"
    words = set(EntityWord.objects.filter(entity_id=kns.pk).values_list("word", flat=True))
    assert words == {"kestrel", "navigation", "system"}


def test_deleted_rows_take_their_words_with_them_and_workspaces_stay_apart(alice, bob, graph):
    make_graph(bob.workspace, entities={"Jonas Lindqvist": "person"})
    assert found(bob.workspace, "lindqvst") == ["Jonas Lindqvist"]
    jonas = graph["Jonas Lindqvist"]
    Entity.objects.filter(pk=jonas.pk).delete()
    assert not EntityWord.objects.filter(entity_id=jonas.pk).exists()
    assert found(alice.workspace, "lindqvist") == []
    assert found(bob.workspace, "lindqvist") == ["Jonas Lindqvist"]


def test_the_api_searches_words_and_ranks(alice, graph):
    client = alice.client()
    base = f"/api/v1/workspaces/{alice.workspace.slug}/entities"
    body = client.get(base, {"q": "Lindkvist"}).json()
    assert [i["name"] for i in body["items"]] == ["Jonas Lindqvist"]
    assert client.get(base, {"q": "lindq", "match": "prefix"}).json()["count"] == 0
    assert client.get(base, {"q": "navigation", "order": "name"}).json()["count"] == 1


def test_the_migration_backfills_existing_names(alice, graph):
    """What 0014 does for rows written before it: the same words and keys as the triggers."""
    do_add_alias(
        workspace=alice.workspace, entity_id=graph["Hannah Berg"].pk, name="Hanna Bergström"
    )
    words = set(EntityWord.objects.values_list("entity_id", "word"))
    keys = set(WordTypoKey.objects.values_list("workspace_id", "key", "word"))
    EntityWord.objects.all().delete()
    WordTypoKey.objects.all().delete()
    assert found(alice.workspace, "bergstrom") == []
    migration = import_module("knowledge.migrations.0014_entity_search_words")
    with connection.cursor() as cursor:
        cursor.execute(migration.BACKFILL)
    assert set(EntityWord.objects.values_list("entity_id", "word")) == words
    assert set(WordTypoKey.objects.values_list("workspace_id", "key", "word")) == keys
    assert found(alice.workspace, "bergstrom") == ["Hannah Berg"]
