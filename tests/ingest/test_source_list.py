"""`GET /workspaces/{slug}/sources`: what each source holds and gave (documents, chunks,
entities, last change) read for a whole page in a fixed number of queries, and the filters
by tag, kind and status; `crawl --tags` stores its tags where the filter finds them."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ingest.actions.sources import do_create_text_source, do_refresh_source_progress
from ingest.models import Source
from knowledge.actions.curation.entities import do_delete_entity
from knowledge.actions.evidence import do_refresh_derived
from tests.knowledge.graph_data import make_graph, mention_again
from workspaces.models import Role

pytestmark = pytest.mark.django_db

URL = "/api/v1/workspaces/acme/sources"


def listed(member, query: str = "") -> dict:
    response = member.client().get(f"{URL}{query}")
    assert response.status_code == 200, response.content
    return response.json()


def note(member, title: str, *, tags: tuple[str, ...] = ()) -> Source:
    source, _ = do_create_text_source(
        workspace=member.workspace, title=title, text=f"{title} notes.", tags=tags
    )
    return source


def test_each_source_says_its_documents_chunks_entities_and_last_change(alice):
    built = make_graph(
        alice.workspace,
        entities={"Ada Lovelace": "person", "Analytical Engine": "product", "Loner": "concept"},
        relations=[("Ada Lovelace", "Analytical Engine", "created_by")],
    )
    other = make_graph(alice.workspace, entities={"Grace Hopper": "person"}, title="Other")
    # Ada is named in the other source's document too: she counts for both.
    ada = built.entities["Ada Lovelace"]
    mention_again(built, ada, 2, chunk=other.chunk)
    do_refresh_derived(workspace_id=alice.workspace.pk, entity_ids=[ada.pk], relation_ids=[])
    # A deleted entity is no longer one the source gives.
    do_delete_entity(workspace=alice.workspace, entity_id=built.entities["Loner"].pk)
    for source in (built.source, other.source):
        do_refresh_source_progress(source_id=source.pk)
    later = timezone.now() + timedelta(minutes=5)
    Source.objects.filter(pk=built.source.pk).update(last_slice_at=later)
    empty = note(alice, "Empty so far")

    rows = {row["id"]: row for row in listed(alice)["items"]}

    first = rows[built.source.pk]
    assert (first["document_count"], first["chunk_count"], first["entity_count"]) == (1, 1, 2)
    assert first["updated_at"].startswith(later.isoformat()[:19])
    assert rows[other.source.pk]["entity_count"] == 2  # Grace, and Ada named there too
    assert rows[empty.pk]["entity_count"] == 0
    assert rows[empty.pk]["document_count"] == 1
    # One source's answer carries the same figures.
    one = alice.client().get(f"{URL}/{built.source.pk}").json()
    assert (one["document_count"], one["chunk_count"], one["entity_count"]) == (1, 1, 2)


def test_a_page_of_sources_costs_the_same_queries_however_many_it_holds(alice):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert listed(alice)["count"] == Source.objects.count()
        return len(captured)

    make_graph(alice.workspace, entities={"Ada Lovelace": "person"}, title="One")
    queries()  # the first request of a token also records when it was used
    few = queries()
    for i in range(8):
        make_graph(alice.workspace, entities={f"Person {i}": "person"}, title=f"More {i}")
        note(alice, f"Note {i}", tags=("many",))
    assert queries() == few


def test_the_list_filters_by_tag_kind_and_status(alice, bob):
    harbour = note(alice, "Harbour", tags=("ships", "north"))
    tides = note(alice, "Tides", tags=("north",))
    crawled = make_graph(alice.workspace, entities={"Ada": "person"}, title="Graph").source
    Source.objects.filter(pk=crawled.pk).update(kind="crawl", tags=["north"])
    Source.objects.filter(pk=tides.pk).update(status="done")
    note(bob, "Globex north", tags=("north",))  # another workspace's: never listed

    def ids(query: str) -> set[int]:
        return {row["id"] for row in listed(alice, query)["items"]}

    assert ids("?tag=north") == {harbour.pk, tides.pk, crawled.pk}
    assert ids("?tag=ships") == {harbour.pk}
    assert ids("?tag=nobody") == set()
    assert ids("?kind=text&tag=north") == {harbour.pk, tides.pk}
    assert ids("?kind=crawl") == {crawled.pk}
    assert ids("?status=done") == {tides.pk, crawled.pk}
    assert ids("?status=done&kind=text&tag=north") == {tides.pk}
    assert listed(alice, "?tag=north")["items"][0]["tags"]  # the items keep their fields


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("?kind=pdf", "kind: choose one of upload, text"),
        ("?status=stuck", "status: choose one"),
        ("?tag=a%00b", "tag: no control characters."),
    ],
)
def test_an_unknown_kind_or_status_or_an_impossible_tag_is_refused_saying_why(alice, query, named):
    response = alice.client().get(f"{URL}{query}")
    assert response.status_code == 422
    assert named in response.json()["error"]["message"]


def test_viewers_filter_too(make_member):
    viewer = make_member("vera", workspace="acme", role=Role.VIEWER)
    note(viewer, "Harbour", tags=("ships",))
    assert [row["name"] for row in listed(viewer, "?tag=ships")["items"]] == ["Harbour"]


def test_crawl_tags_are_stored_on_the_source_like_upload_tags(alice):
    out = StringIO()
    call_command(
        "crawl", "https://harbour.example/docs/", "--workspace", "acme",
        "--tags", " docs, north ,,docs", stdout=out, stderr=StringIO(),
    )  # fmt: skip
    source = Source.objects.get(kind="crawl")
    assert source.tags == ["docs", "north"]
    assert {row["id"] for row in listed(alice, "?tag=north")["items"]} == {source.pk}
    call_command(
        "crawl", "https://harbour.example/blog/", "--workspace", "acme",
        stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    assert Source.objects.exclude(pk=source.pk).get(kind="crawl").tags == []
