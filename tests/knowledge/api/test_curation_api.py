"""Curation over the API: editors curate, viewers read, other workspaces see nothing."""

from __future__ import annotations

import json

import pytest

from knowledge.models import Entity, Mention, MergeSuggestion
from tests.knowledge.actions.curation.curation_data import FIRST, WORLD
from workspaces.models import Role

BASE = "/api/v1/workspaces/acme"


def send(client, method, url, body=None):
    return getattr(client, method)(
        url, data=json.dumps(body or {}), content_type="application/json"
    )


@pytest.fixture
def graph(llm, ingest_text):
    llm.responder = WORLD
    ingest_text(FIRST)
    return {e.name: e for e in Entity.objects.all()}


def test_merge_then_unmerge_through_the_api(alice, graph):
    client = alice.client()
    google, alphabet = graph["Google"], graph["Alphabet"]
    merged = send(
        client, "post", f"{BASE}/entities/merge",
        {"entities": [google.pk, alphabet.pk], "into": alphabet.pk},
    )  # fmt: skip
    assert merged.status_code == 200
    body = merged.json()
    assert body["event"]["action"] == "merge"
    assert body["entity"]["id"] == alphabet.pk
    assert body["entity"]["aliases"] == ["Google"]
    assert Entity.objects.get(pk=google.pk).state == "merged"

    undone = send(client, "post", f"{BASE}/entities/{google.pk}/unmerge")
    assert undone.status_code == 200
    assert undone.json()["event"]["action"] == "unmerge"
    assert Entity.objects.get(pk=google.pk).state == "active"
    again = send(client, "post", f"{BASE}/entities/{google.pk}/unmerge")
    assert again.status_code == 404

    events = client.get(f"{BASE}/curation-events").json()
    assert [e["action"] for e in events["items"]] == ["unmerge", "merge"]
    assert events["items"][1]["undone_by"] == events["items"][0]["id"]
    assert events["items"][0]["actor"] == "alice"


def test_patch_renames_retypes_and_sets_aliases(alice, graph):
    client = alice.client()
    google = graph["Google"]
    response = send(
        client, "patch", f"{BASE}/entities/{google.pk}",
        {"name": "Google LLC", "type": "product", "aliases": ["Goog"]},
    )  # fmt: skip
    assert response.status_code == 200
    entity = response.json()["entity"]
    assert entity["name"] == "Google LLC"
    assert entity["type"] == "product"
    assert set(entity["aliases"]) == {"Google", "Goog"} or entity["aliases"] == ["Goog"]
    empty = send(client, "patch", f"{BASE}/entities/{google.pk}", {})
    assert empty.status_code == 422
    clash = send(client, "patch", f"{BASE}/entities/{google.pk}", {"name": "Alphabet"})
    assert clash.status_code == 200  # different type now: no clash
    bad_type = send(client, "patch", f"{BASE}/entities/{google.pk}", {"type": "nonsense"})
    assert bad_type.status_code == 422


def test_delete_restore_and_split(alice, graph):
    client = alice.client()
    brin = graph["Sergey Brin"]
    deleted = client.delete(f"{BASE}/entities/{brin.pk}")
    assert deleted.status_code == 200
    assert deleted.json()["entity"]["state"] == "deleted"
    assert send(client, "post", f"{BASE}/entities/{brin.pk}/restore").status_code == 200
    assert send(client, "post", f"{BASE}/entities/{brin.pk}/restore").status_code == 409

    google = graph["Google"]
    mention = Mention.objects.filter(entity=google).first()
    assert mention is not None
    split = send(
        client, "post", f"{BASE}/entities/{google.pk}/split",
        {"mention_ids": [mention.pk], "name": "Google Search", "type": "product"},
    )  # fmt: skip
    assert split.status_code == 200
    assert split.json()["entity"]["name"] == "Google Search"
    assert split.json()["entity"]["mention_count"] == 1


def test_the_review_queue_accepts_and_rejects(alice, graph):
    client = alice.client()
    a, b, c = graph["Google"], graph["Alphabet"], graph["Larry Page"]
    first = MergeSuggestion.objects.create(
        workspace=alice.workspace, entity_a_id=min(a.pk, b.pk), entity_b_id=max(a.pk, b.pk),
        score=0.8, reasons=["token-set 0.80"],
    )  # fmt: skip
    second = MergeSuggestion.objects.create(
        workspace=alice.workspace, entity_a_id=min(a.pk, c.pk), entity_b_id=max(a.pk, c.pk),
        score=0.7, reasons=["embedding 0.70"],
    )  # fmt: skip
    queue = client.get(f"{BASE}/merge-suggestions").json()
    assert [s["id"] for s in queue["items"]] == [first.pk, second.pk]
    assert queue["items"][0]["entity_a"]["name"] in {"Google", "Alphabet"}

    rejected = send(client, "post", f"{BASE}/merge-suggestions/{second.pk}/reject")
    assert rejected.status_code == 200
    accepted = send(client, "post", f"{BASE}/merge-suggestions/{first.pk}/accept", {"into": b.pk})
    assert accepted.status_code == 200
    assert accepted.json()["entity"]["id"] == b.pk
    assert client.get(f"{BASE}/merge-suggestions").json()["items"] == []
    done = client.get(f"{BASE}/merge-suggestions?status=rejected").json()["items"]
    assert [s["id"] for s in done] == [second.pk]
    twice = send(client, "post", f"{BASE}/merge-suggestions/{first.pk}/accept")
    assert twice.status_code == 409


def test_viewers_cannot_curate_and_strangers_see_nothing(alice, bob, make_member, graph):
    viewer = make_member("vera", workspace="acme", role=Role.VIEWER).client()
    google, alphabet = graph["Google"], graph["Alphabet"]
    body = {"entities": [google.pk, alphabet.pk]}
    assert send(viewer, "post", f"{BASE}/entities/merge", body).status_code == 403
    assert send(viewer, "patch", f"{BASE}/entities/{google.pk}", {"name": "x"}).status_code == 403
    assert viewer.delete(f"{BASE}/entities/{google.pk}").status_code == 403
    assert viewer.get(f"{BASE}/curation-events").status_code == 200
    stranger = bob.client()
    assert send(stranger, "post", f"{BASE}/entities/merge", body).status_code == 404
    assert (
        send(stranger, "post", "/api/v1/workspaces/globex/entities/merge", body).status_code == 404
    )
    assert stranger.delete(f"/api/v1/workspaces/globex/entities/{google.pk}").status_code == 404
    assert Entity.objects.get(pk=google.pk).state == "active"
