"""The graph read API: entity search and details with evidence, relations, neighbourhoods,
paths, subgraphs, hubs and stats — for viewers too, never across workspaces, in a fixed
number of queries per page."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ingest.actions.sources import do_create_text_source, validate_source_options
from knowledge.actions.curation.entities import do_add_alias
from knowledge.models import Alias, Entity, Mention, Relation
from knowledge.selectors.entities import search_entities
from tests.knowledge.actions.curation.curation_data import FIRST, WORLD
from tests.knowledge.graph_data import chain, make_graph
from tests.support import run_pending
from workspaces.models import Role

BASE = "/api/v1/workspaces/acme"


@pytest.fixture
def world(llm, ingest_text):
    """FIRST ingested into acme through the real pipeline, extracted by a scripted model."""
    llm.responder = WORLD
    source = ingest_text(FIRST, title="Founders")
    entities = {e.name: e for e in Entity.objects.filter(workspace__slug="acme")}
    return source, entities


@pytest.fixture
def viewer(make_member, alice):
    return make_member("vera", workspace="acme", role=Role.VIEWER)


def ids(items):
    return [item["id"] for item in items]


def names(items):
    return sorted(item["name"] for item in items)


# --- entities ----------------------------------------------------------------------------------


def test_entities_lists_active_entities_with_their_degree(viewer, world):
    _, entities = world
    body = viewer.client().get(f"{BASE}/entities").json()
    assert body["count"] == 5
    assert names(body["items"]) == sorted(entities)
    degree = {item["name"]: item["degree"] for item in body["items"]}
    assert degree == {
        "Google": 4,
        "Alphabet": 3,
        "Larry Page": 2,
        "Mountain View": 2,
        "Sergey Brin": 1,
    }
    google = next(i for i in body["items"] if i["name"] == "Google")
    assert set(google) == {
        "id", "name", "type", "description", "aliases", "mention_count", "degree",
        "community", "source_ids", "first_seen_at", "last_seen_at", "state",
    }  # fmt: skip
    assert google["type"] == "organization"
    assert google["mention_count"] >= 2


def test_entity_search_by_prefix_ignores_case_and_punctuation_and_finds_aliases(alice, world):
    _, entities = world
    client = alice.client()
    assert names(client.get(f"{BASE}/entities?q=LARRY").json()["items"]) == ["Larry Page"]
    assert names(client.get(f"{BASE}/entities?q=the%20larry").json()["items"]) == ["Larry Page"]
    assert names(client.get(f"{BASE}/entities?q=%22mountain%20vi").json()["items"]) == [
        "Mountain View"
    ]
    # A later word matches too; match=prefix wants the start of the whole name.
    assert names(client.get(f"{BASE}/entities?q=brin").json()["items"]) == ["Sergey Brin"]
    assert client.get(f"{BASE}/entities?q=brin&match=prefix").json()["count"] == 0
    do_add_alias(workspace=alice.workspace, entity_id=entities["Google"].pk, name="Googol Search")
    found = client.get(f"{BASE}/entities?q=goo").json()
    assert ids(found["items"]) == [entities["Google"].pk]  # once, by name or alias
    assert ids(client.get(f"{BASE}/entities?q=googol%20s").json()["items"]) == [
        entities["Google"].pk
    ]


def test_entity_search_contains_matches_inside_names(alice, world):
    client = alice.client()
    assert names(client.get(f"{BASE}/entities?q=BRIN&match=contains").json()["items"]) == [
        "Sergey Brin"
    ]
    assert names(client.get(f"{BASE}/entities?q=a&match=contains").json()["items"]) == [
        "Alphabet", "Larry Page", "Mountain View",
    ]  # fmt: skip
    # LIKE wildcards in q are plain characters.
    assert client.get(f"{BASE}/entities?q=%25&match=contains").json()["count"] == 0
    assert client.get(f"{BASE}/entities?q=_&match=contains").json()["count"] == 0


def test_entity_filters_by_type_source_time_degree_and_orders(alice, world):
    source, _ = world
    client = alice.client()
    get = lambda query: client.get(f"{BASE}/entities?{query}").json()  # noqa: E731
    assert names(get("type=person")["items"]) == ["Larry Page", "Sergey Brin"]
    assert get("type=nonsense")["count"] == 0
    assert get(f"source={source.pk}")["count"] == 5
    assert get(f"source={source.pk + 1000}")["count"] == 0
    assert names(get("min_degree=3")["items"]) == ["Alphabet", "Google"]
    assert get("seen_after=2999-01-01T00:00:00Z")["count"] == 0
    assert get("seen_before=2000-01-01T00:00:00Z")["count"] == 0
    assert get("seen_after=2000-01-01T00:00:00Z&seen_before=2999-01-01T00:00:00Z")["count"] == 5
    by_degree = get("order=-degree")["items"]
    assert [i["name"] for i in by_degree[:2]] == ["Google", "Alphabet"]
    page = get("order=-degree&limit=2&offset=1")
    assert page["count"] == 5
    assert [i["name"] for i in page["items"]] == ["Alphabet", by_degree[2]["name"]]
    assert client.get(f"{BASE}/entities?limit=501").status_code == 422
    assert client.get(f"{BASE}/entities?order=sideways").status_code == 422


def test_deleted_entities_leave_the_list_and_the_degrees(alice, world):
    _, entities = world
    client = alice.client()
    assert client.delete(f"{BASE}/entities/{entities['Google'].pk}").status_code == 200
    items = client.get(f"{BASE}/entities").json()["items"]
    assert "Google" not in names(items)
    assert {i["name"]: i["degree"] for i in items}["Sergey Brin"] == 0
    deleted = client.get(f"{BASE}/entities?state=deleted").json()["items"]
    assert names(deleted) == ["Google"]


def test_entity_detail_has_sources_relation_counts_and_located_evidence(viewer, world):
    source, entities = world
    google = entities["Google"]
    response = viewer.client().get(f"{BASE}/entities/{google.pk}")
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "Google"
    assert body["type"] == "organization"
    assert body["type_votes"] == {"organization": body["mention_count"]}
    assert body["degree"] == 4
    assert body["sources"] == [{"id": source.pk, "name": source.name, "kind": "text"}]
    assert body["relation_counts"] == [
        {"type": "works_for", "direction": "in", "count": 2},
        {"type": "located_in", "direction": "out", "count": 1},
        {"type": "part_of", "direction": "out", "count": 1},
    ]
    assert len(body["evidence"]) == Mention.objects.filter(entity=google).count()
    document = source.documents.get()
    for row in body["evidence"]:
        assert row["document"]["id"] == document.pk
        assert row["document"]["title"] == document.title
        assert row["document"]["source_id"] == source.pk
        assert document.text[row["char_start"] : row["char_end"]] == "Google"
        start = row["snippet_start"]
        assert document.text[start : start + len(row["snippet"])] == row["snippet"]
        assert "Google" in row["snippet"]
        assert len(row["snippet"]) <= 400
    limited = viewer.client().get(f"{BASE}/entities/{google.pk}?evidence_limit=1").json()
    assert len(limited["evidence"]) == 1
    assert viewer.client().get(f"{BASE}/entities/{google.pk}?evidence_limit=101").status_code == 422


def test_get_patch_and_delete_of_an_entity_are_one_route(viewer, alice, world):
    _, entities = world
    url = f"{BASE}/entities/{entities['Alphabet'].pk}"
    assert viewer.client().get(url).status_code == 200
    refused = viewer.client().patch(url, data='{"name": "X"}', content_type="application/json")
    assert refused.status_code == 403
    assert viewer.client().delete(url).status_code == 403
    renamed = alice.client().patch(
        url, data='{"name": "Alphabet Inc."}', content_type="application/json"
    )
    assert renamed.status_code == 200
    assert alice.client().get(url).json()["name"] == "Alphabet Inc."


def test_a_merged_entity_still_answers_and_points_at_its_survivor(alice, world):
    _, entities = world
    google, alphabet = entities["Google"], entities["Alphabet"]
    merged = alice.client().post(
        f"{BASE}/entities/merge",
        data=json.dumps({"entities": [google.pk, alphabet.pk], "into": alphabet.pk}),
        content_type="application/json",
    )
    assert merged.status_code == 200
    body = alice.client().get(f"{BASE}/entities/{google.pk}").json()
    assert body["state"] == "merged"
    assert body["merged_into"] == alphabet.pk
    assert body["degree"] == 0
    around = alice.client().get(f"{BASE}/entities/{google.pk}/neighborhood").json()
    assert around == {"nodes": [], "edges": [], "truncated": False}


# --- relations ---------------------------------------------------------------------------------


def test_relations_filter_by_ends_and_type_strongest_first(viewer, world):
    _, entities = world
    client = viewer.client()
    larry, google = entities["Larry Page"], entities["Google"]
    everything = client.get(f"{BASE}/relations").json()
    assert everything["count"] == 6
    weights = [r["weight"] for r in everything["items"]]
    assert weights == sorted(weights, reverse=True)
    first = everything["items"][0]
    assert set(first) == {
        "id", "source", "target", "type", "description", "keywords", "weight",
        "evidence_count", "state", "created_at",
    }  # fmt: skip
    assert set(first["source"]) == {"id", "name", "type"}
    from_larry = client.get(f"{BASE}/relations?source={larry.pk}").json()["items"]
    assert sorted(r["target"]["name"] for r in from_larry) == ["Alphabet", "Google"]
    into_google = client.get(f"{BASE}/relations?target={google.pk}").json()["items"]
    assert sorted(r["source"]["name"] for r in into_google) == ["Larry Page", "Sergey Brin"]
    assert client.get(f"{BASE}/relations?entity={google.pk}").json()["count"] == 4
    works_for = client.get(f"{BASE}/relations?type=works_for").json()["items"]
    assert {r["type"] for r in works_for} == {"works_for"}
    assert len(works_for) == 3
    both = client.get(f"{BASE}/relations?source={larry.pk}&target={google.pk}").json()
    assert [r["type"] for r in both["items"]] == ["works_for"]


def test_relation_detail_shows_each_sentence_with_its_document_span(viewer, world):
    source, entities = world
    relation = Relation.objects.get(
        source=entities["Sergey Brin"], target=entities["Google"], type__name="works_for"
    )
    body = viewer.client().get(f"{BASE}/relations/{relation.pk}").json()
    assert body["source"]["name"] == "Sergey Brin"
    assert body["target"]["name"] == "Google"
    assert body["evidence_total"] == len(body["evidence"]) >= 1
    document = source.documents.get()
    for row in body["evidence"]:
        assert row["document"] == {
            "id": document.pk,
            "title": document.title,
            "path": document.path,
            "url": None,
            "source_id": source.pk,
        }
        assert row["strength"] == 8.0
        assert row["description"] == "Sergey Brin works_for Google."
        sentence = document.text[row["char_start"] : row["char_end"]]
        assert "Sergey Brin" in sentence
        assert "Google" in sentence
        assert row["snippet"] == sentence
        assert row["snippet_start"] == row["char_start"]


# --- graph queries (backend) -------------------------------------------------------------------


def test_neighborhood_returns_the_graph_payload_nearest_first(viewer, world):
    _, entities = world
    google = entities["Google"]
    client = viewer.client()
    body = client.get(f"{BASE}/entities/{google.pk}/neighborhood").json()
    assert set(body) == {"nodes", "edges", "truncated"}
    assert body["truncated"] is False
    depth = {n["name"]: n["depth"] for n in body["nodes"]}
    assert depth == {
        "Google": 0, "Alphabet": 1, "Larry Page": 1, "Sergey Brin": 1, "Mountain View": 1,
    }  # fmt: skip
    assert body["nodes"][0]["name"] == "Google"
    node = body["nodes"][0]
    assert set(node) == {"id", "name", "type", "degree", "depth", "mention_count", "community"}
    assert node["degree"] == 4
    node_ids = {n["id"] for n in body["nodes"]}
    assert len(body["edges"]) == 6  # every edge among the five
    for edge in body["edges"]:
        assert set(edge) == {"id", "source", "target", "type", "weight"}
        assert {edge["source"], edge["target"]} <= node_ids

    out = client.get(f"{BASE}/entities/{google.pk}/neighborhood?direction=out").json()
    assert names(out["nodes"]) == ["Alphabet", "Google", "Mountain View"]
    typed = client.get(
        f"{BASE}/entities/{google.pk}/neighborhood?relation_types=works_for,nonsense"
    ).json()
    assert names(typed["nodes"]) == ["Google", "Larry Page", "Sergey Brin"]
    assert {e["type"] for e in typed["edges"]} == {"works_for"}
    people = client.get(f"{BASE}/entities/{google.pk}/neighborhood?entity_types=person").json()
    assert names(people["nodes"]) == ["Google", "Larry Page", "Sergey Brin"]
    cut = client.get(f"{BASE}/entities/{google.pk}/neighborhood?limit=2").json()
    assert len(cut["nodes"]) == 2
    assert cut["truncated"] is True
    two = client.get(f"{BASE}/entities/{entities['Sergey Brin'].pk}/neighborhood?hops=2").json()
    assert {n["name"]: n["depth"] for n in two["nodes"]}["Alphabet"] == 2
    for bad in ("hops=0", "hops=4", "limit=2001", "direction=up"):
        assert client.get(f"{BASE}/entities/{google.pk}/neighborhood?{bad}").status_code == 422


def test_path_finds_a_shortest_path_or_says_found_false(alice, world):
    _, entities = world
    client = alice.client()
    brin, view = entities["Sergey Brin"], entities["Mountain View"]
    body = client.get(f"{BASE}/path?from={brin.pk}&to={view.pk}").json()
    assert body["found"] is True
    assert body["length"] == 2
    assert [n["name"] for n in body["nodes"]] == ["Sergey Brin", "Google", "Mountain View"]
    assert [n["depth"] for n in body["nodes"]] == [0, 1, 2]
    assert len(body["edges"]) == 2
    assert body["truncated"] is False

    too_short = client.get(f"{BASE}/path?from={brin.pk}&to={view.pk}&max_hops=1")
    assert too_short.status_code == 200
    assert too_short.json() == {
        "nodes": [], "edges": [], "truncated": False, "found": False, "length": None,
    }  # fmt: skip
    loner = make_graph(alice.workspace, entities={"Lonely Island": "location"})
    island = loner.entities["Lonely Island"].pk
    none = client.get(f"{BASE}/path?from={brin.pk}&to={island}").json()
    assert none["found"] is False
    same = client.get(f"{BASE}/path?from={brin.pk}&to={brin.pk}").json()
    assert same["found"] is True
    assert same["length"] == 0
    missing = client.get(f"{BASE}/path?from={brin.pk}&to={island + 10_000}")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    assert client.get(f"{BASE}/path?from={brin.pk}").status_code == 422
    assert client.get(f"{BASE}/path?from={brin.pk}&to={view.pk}&max_hops=7").status_code == 422


def test_subgraph_returns_the_named_entities_and_edges_among_them(viewer, world, bob):
    _, entities = world
    client = viewer.client()
    stranger = make_graph(bob.workspace, entities={"Initech": "organization"})
    wanted = [entities["Google"].pk, entities["Alphabet"].pk, stranger.entities["Initech"].pk]
    body = client.get(f"{BASE}/subgraph?ids={','.join(map(str, wanted))}").json()
    assert names(body["nodes"]) == ["Alphabet", "Google"]
    assert [e["type"] for e in body["edges"]] == ["part_of"]
    assert client.get(f"{BASE}/subgraph?ids=").json()["nodes"] == []
    bad = client.get(f"{BASE}/subgraph?ids=1,x")
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "invalid"
    too_many = ",".join(str(i) for i in range(1, 2003))
    assert client.get(f"{BASE}/subgraph?ids={too_many}").status_code == 422


def test_hubs_rank_by_degree_and_filter_by_type(viewer, world):
    client = viewer.client()
    body = client.get(f"{BASE}/hubs").json()
    assert body["count"] == 5
    assert [n["name"] for n in body["items"][:2]] == ["Google", "Alphabet"]
    people = client.get(f"{BASE}/hubs?type=person").json()
    assert [n["name"] for n in people["items"]] == ["Larry Page", "Sergey Brin"]
    assert people["count"] == 2
    page = client.get(f"{BASE}/hubs?limit=1&offset=1").json()
    assert [n["name"] for n in page["items"]] == ["Alphabet"]


def test_stats_count_the_graph_and_what_it_was_built_from(viewer, world):
    body = viewer.client().get(f"{BASE}/stats").json()
    assert body["entities"] == 5
    assert body["relations"] == 6
    assert body["entities_by_type"] == {"organization": 2, "person": 2, "location": 1}
    assert body["relations_by_type"] == {"works_for": 3, "located_in": 2, "part_of": 1}
    assert body["max_degree"] == 4
    assert sum(body["degree_distribution"].values()) == 5
    assert body["counts"]["sources"] == 1
    assert body["counts"]["documents"] == 1
    assert body["counts"]["orphan_entities"] == 0
    assert body["backend"] == "default"


# --- scoping -----------------------------------------------------------------------------------


def test_another_workspaces_graph_is_invisible_through_every_filter(alice, bob, world):
    _, entities = world
    source, _ = do_create_text_source(
        workspace=bob.workspace, title="theirs", text=FIRST, options=validate_source_options()
    )
    run_pending(source)
    theirs = {e.name: e for e in Entity.objects.filter(workspace=bob.workspace)}
    assert set(theirs) == set(entities)
    client = alice.client()
    listed = client.get(f"{BASE}/entities?limit=500").json()
    assert set(ids(listed["items"])) == {e.pk for e in entities.values()}
    assert client.get(f"{BASE}/entities?source={source.pk}").json()["count"] == 0
    foreign = theirs["Google"].pk
    assert client.get(f"{BASE}/relations?entity={foreign}").json()["count"] == 0
    for url in (
        f"{BASE}/entities/{foreign}",
        f"{BASE}/entities/{foreign}/neighborhood",
        f"{BASE}/path?from={entities['Google'].pk}&to={foreign}",
        f"{BASE}/path?from={foreign}&to={entities['Google'].pk}",
        f"{BASE}/relations/{Relation.objects.filter(workspace=bob.workspace).earliest('pk').pk}",
    ):
        response = client.get(url)
        assert response.status_code == 404, url
        assert response.json()["error"]["code"] == "not_found"
    stats = client.get(f"{BASE}/stats").json()
    assert stats["entities"] == 5
    assert stats["counts"]["sources"] == 1
    hubs = client.get(f"{BASE}/hubs?limit=100").json()
    assert {n["id"] for n in hubs["items"]} <= {e.pk for e in entities.values()}


# --- query counts ------------------------------------------------------------------------------


def _queries(client, url) -> int:
    client.get(url)  # the token's first use of the minute also records last_used_at
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
        assert response.status_code == 200, response.content
    return len(captured.captured_queries)


@pytest.mark.parametrize(
    "url",
    [
        "entities",
        "entities?q=node&min_degree=1&order=-degree",
        "relations",
        "relations?type=related_to",
        "hubs?limit=100",
        "stats",
    ],
)
def test_list_endpoints_cost_the_same_queries_for_one_row_or_thirty(
    url, make_member, django_assert_max_num_queries
):
    small = make_member("sam", workspace="small")
    large = make_member("lars", workspace="large")
    chain(small.workspace, 2)
    chain(large.workspace, 31)
    one = _queries(small.client(), f"/api/v1/workspaces/small/{url}")
    large.client().get(f"/api/v1/workspaces/large/{url}")
    with django_assert_max_num_queries(one):
        response = large.client().get(f"/api/v1/workspaces/large/{url}")
    assert response.status_code == 200
    if "items" in response.json():
        assert len(response.json()["items"]) >= 30 or url.startswith("hubs")


def test_detail_endpoints_cost_the_same_queries_for_one_evidence_row_or_thirty(make_member):
    small = make_member("sam", workspace="small")
    large = make_member("lars", workspace="large")
    little = chain(small.workspace, 2).entities["Node 000"]
    big = chain(large.workspace, 2).entities["Node 000"]
    first = Mention.objects.get(entity=big)
    Mention.objects.bulk_create(
        Mention(workspace=large.workspace, entity=big, chunk=first.chunk, run=first.run,
                surface_form="Node 000", char_start=i, char_end=i + 8)
        for i in range(1, 30)
    )  # fmt: skip
    one = _queries(small.client(), f"/api/v1/workspaces/small/entities/{little.pk}")
    thirty = _queries(large.client(), f"/api/v1/workspaces/large/entities/{big.pk}")
    assert one == thirty
    small_rel = Relation.objects.filter(workspace=small.workspace).get()
    large_rel = Relation.objects.filter(workspace=large.workspace).get()
    assert _queries(small.client(), f"/api/v1/workspaces/small/relations/{small_rel.pk}") == (
        _queries(large.client(), f"/api/v1/workspaces/large/relations/{large_rel.pk}")
    )


def test_entity_prefix_search_is_answered_from_the_canonical_name_indexes(alice):
    built = chain(alice.workspace, 3)
    concept = built.entities["Node 000"].type
    fillers = Entity.objects.bulk_create(
        Entity(workspace=alice.workspace, name=f"Filler {i}", canonical_name=f"filler {i}",
               type=concept)
        for i in range(3000)
    )  # fmt: skip
    Alias.objects.bulk_create(
        Alias(workspace=alice.workspace, entity=e, name=e.name, canonical=e.canonical_name,
              origin="manual")
        for e in fillers
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE knowledge_entity")
        cursor.execute("ANALYZE knowledge_alias")
    found = search_entities(alice.workspace, q="Node 00")
    assert sorted(e.name for e in found) == ["Node 000", "Node 001", "Node 002"]
    plan = found.explain()
    # Range scans of both canonical-name indexes, not a read of the workspace's names.
    assert "Index Cond: ((workspace_id = " in plan
    assert "entity_ws_canon" in plan, plan
    assert "alias_ws_canon" in plan, plan
    assert "(canonical_name)::text >= 'node 00'::text" in plan, plan
