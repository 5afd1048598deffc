"""The schema registry and extraction endpoints: shapes, roles and workspace isolation."""

from __future__ import annotations

import json

from knowledge.models import EntityType, TypeStatus
from tests.knowledge.conftest import World
from workspaces.models import Role


def post(client, url, body):
    return client.post(url, data=json.dumps(body), content_type="application/json")


def test_schema_lists_the_seeded_default_types(alice):
    response = alice.client().get("/api/v1/workspaces/acme/schema")
    assert response.status_code == 200
    body = response.json()
    entity = {t["name"]: t for t in body["entity_types"]}
    relation = {t["name"] for t in body["relation_types"]}
    assert {"person", "organization", "location", "product", "technology", "concept",
            "event", "work"} <= set(entity)  # fmt: skip
    assert {"works_for", "part_of", "uses", "located_in", "created_by", "related_to"} <= relation
    person = entity["person"]
    assert person["status"] == "active"
    assert person["origin"] == "default"
    assert person["examples"]
    assert set(person) == {
        "id", "name", "description", "examples", "status", "origin", "proposed_count",
        "used_by", "created_at",
    }  # fmt: skip
    assert len(body["schema_hash"]) == 64


def test_editors_add_accept_retire_and_rename_types(alice, make_member):
    client = alice.client()
    created = post(
        client,
        "/api/v1/workspaces/acme/schema/entity-types",
        {"name": "Gene", "description": "A gene.", "examples": ["BRCA1"]},
    )
    assert created.status_code == 201
    assert created.json()["name"] == "gene"
    hash_before = client.get("/api/v1/workspaces/acme/schema").json()["schema_hash"]

    retired = client.post("/api/v1/workspaces/acme/schema/entity-types/gene/retire")
    assert retired.json()["status"] == "retired"
    assert client.get("/api/v1/workspaces/acme/schema").json()["schema_hash"] != hash_before
    accepted = client.post("/api/v1/workspaces/acme/schema/entity-types/gene/accept")
    assert accepted.json()["status"] == "active"
    renamed = client.patch(
        "/api/v1/workspaces/acme/schema/entity-types/gene",
        data=json.dumps({"name": "genetic locus"}),
        content_type="application/json",
    )
    assert renamed.status_code == 200
    assert renamed.json()["name"] == "genetic_locus"
    relation = post(client, "/api/v1/workspaces/acme/schema/relation-types", {"name": "inhibits"})
    assert relation.status_code == 201


def test_type_changes_are_refused_with_clear_errors(alice):
    client = alice.client()
    duplicate = post(client, "/api/v1/workspaces/acme/schema/entity-types", {"name": "Person"})
    assert duplicate.status_code == 409
    assert "exists already" in duplicate.json()["error"]["message"]
    fallback = client.post("/api/v1/workspaces/acme/schema/entity-types/concept/retire")
    assert fallback.status_code == 409
    assert "fallback" in fallback.json()["error"]["message"]
    missing = client.post("/api/v1/workspaces/acme/schema/relation-types/nope/accept")
    assert missing.status_code == 404
    bad_kind = client.post("/api/v1/workspaces/acme/schema/colour-types/red/accept")
    assert bad_kind.status_code == 422
    empty = post(client, "/api/v1/workspaces/acme/schema/entity-types", {"name": "!!!"})
    assert empty.status_code == 422
    taken = client.patch(
        "/api/v1/workspaces/acme/schema/entity-types/person",
        data=json.dumps({"name": "organization"}),
        content_type="application/json",
    )
    assert taken.status_code == 409


def test_viewers_read_the_schema_but_cannot_change_it(alice, make_member):
    viewer = make_member("vera", workspace="acme", role=Role.VIEWER)
    client = viewer.client()
    assert client.get("/api/v1/workspaces/acme/schema").status_code == 200
    refused = post(client, "/api/v1/workspaces/acme/schema/entity-types", {"name": "gene"})
    assert refused.status_code == 403
    assert (
        client.post("/api/v1/workspaces/acme/schema/entity-types/person/retire").status_code == 403
    )


def test_another_workspace_schema_and_sources_are_invisible(alice, bob, ingest_text):
    source = ingest_text("Ada Lovelace met Charles Babbage in London.")
    post(alice.client(), "/api/v1/workspaces/acme/schema/entity-types", {"name": "gene"})
    client = bob.client()
    assert client.get("/api/v1/workspaces/acme/schema").status_code == 404
    assert (
        client.get(f"/api/v1/workspaces/globex/sources/{source.pk}/extraction").status_code == 404
    )
    assert (
        client.post("/api/v1/workspaces/globex/schema/entity-types/gene/accept").status_code == 404
    )
    names = {
        t["name"] for t in client.get("/api/v1/workspaces/globex/schema").json()["entity_types"]
    }
    assert "gene" not in names


def test_extraction_summary_reports_llm_runs_tokens_and_cost(alice, llm, ingest_text, settings):
    settings.LLM_PRICE_INPUT_PER_MTOK = 1.0
    settings.LLM_PRICE_OUTPUT_PER_MTOK = 4.0
    llm.responder = World(
        entities={"Ada Lovelace": "person", "Charles Babbage": "person"},
        relations=[("Ada Lovelace", "Charles Babbage", "related_to")],
    )
    source = ingest_text("Ada Lovelace met Charles Babbage in London.")

    body = alice.client().get(f"/api/v1/workspaces/acme/sources/{source.pk}/extraction").json()
    assert body["extractor"] == "llm"
    assert body["offline"] is False
    assert body["model"] == "scripted-model"
    assert body["status"] == "done"
    assert body["entities"] == 2
    assert body["relations"] == 1
    assert body["mentions"] == 2
    assert body["calls"] == 2
    assert body["tokens"]["total"] == body["tokens"]["prompt"] + body["tokens"]["completion"] > 0
    expected = (body["tokens"]["prompt"] * 1.0 + body["tokens"]["completion"] * 4.0) / 1e6
    assert abs(body["cost"] - expected) < 1e-6
    assert body["windows"] == {"extracted": 1, "cached": 0, "skipped": 0, "skipped_unknown": 0}
    assert body["runs_total"] == 1
    run = body["runs"][0]
    assert run["entities"] == 2
    assert run["relations"] == 1
    assert run["counts"]["entities"] == 2
    assert run["prompt_version"].startswith("v1@")

    usage = alice.client().get("/api/v1/workspaces/acme/usage").json()
    assert usage["calls"] == 2
    assert usage["prompt_tokens"] == body["tokens"]["prompt"]


def test_offline_results_are_labelled_offline(alice, ingest_text):
    source = ingest_text("Google acquired DeepMind in 2014. DeepMind is based in London.")
    body = alice.client().get(f"/api/v1/workspaces/acme/sources/{source.pk}/extraction").json()
    assert body["extractor"] == "offline"
    assert body["offline"] is True
    assert body["model"].startswith("spacy/")
    assert body["calls"] == 0
    assert body["tokens"]["total"] == 0
    assert body["entities"] >= 3


def test_estimate_and_budget_options_through_the_api(alice, llm, ingest_text):
    llm.responder = World(entities={"Ada Lovelace": "person"})
    source = ingest_text("Ada Lovelace wrote notes.")
    client = alice.client()
    estimate = client.get(f"/api/v1/workspaces/acme/sources/{source.pk}/extraction/estimate")
    assert estimate.status_code == 200
    assert estimate.json()["windows"] == 1
    assert estimate.json()["windows_to_extract"] == 0

    patched = client.patch(
        f"/api/v1/workspaces/acme/sources/{source.pk}",
        data=json.dumps({"token_budget": 5000, "known_only": True}),
        content_type="application/json",
    )
    assert patched.status_code == 200
    assert patched.json()["token_budget"] == 5000
    assert patched.json()["known_only"] is True
    bad = client.patch(
        f"/api/v1/workspaces/acme/sources/{source.pk}",
        data=json.dumps({"token_budget": -1}),
        content_type="application/json",
    )
    assert bad.status_code == 422

    queued = post(client, f"/api/v1/workspaces/acme/sources/{source.pk}/extract", {"force": True})
    assert queued.status_code == 202
    assert queued.json() == {"source_id": source.pk, "queued": True}


def test_sources_can_be_created_known_only_with_a_budget(alice):
    response = post(
        alice.client(),
        "/api/v1/workspaces/acme/sources",
        {
            "kind": "text",
            "title": "t",
            "text": "Some text.",
            "known_only": True,
            "token_budget": 10,
        },
    )
    assert response.status_code == 201
    assert response.json()["known_only"] is True
    assert response.json()["token_budget"] == 10
    wrong = post(
        alice.client(),
        "/api/v1/workspaces/acme/sources",
        {"kind": "text", "title": "t", "text": "Some text.", "known_only": "maybe"},
    )
    assert wrong.status_code == 422


def test_proposed_types_show_in_the_schema_until_accepted(alice, llm, ingest_text):
    llm.script('("entity"<|>BRCA1<|>NEW:gene<|>A gene.)', "<|DONE|>")
    ingest_text("BRCA1 is a human gene.")
    body = alice.client().get("/api/v1/workspaces/acme/schema").json()
    gene = next(t for t in body["entity_types"] if t["name"] == "gene")
    assert gene["status"] == "proposed"
    assert gene["origin"] == "model"
    assert gene["used_by"] == 1
    alice.client().post("/api/v1/workspaces/acme/schema/entity-types/gene/accept")
    assert EntityType.objects.get(name="gene").status == TypeStatus.ACTIVE
