"""What a source gave, on its page (explorer/source_detail_views.py): its entities and
relations, most mentioned in its own documents first, paged by htmx, linked to the
explorer and the entities page narrowed to it; another workspace's source is a 404."""

from __future__ import annotations

import re

import pytest

from ingest.models import Source
from knowledge.actions.curation.entities import do_delete_entity
from knowledge.actions.evidence import do_refresh_derived
from tests.explorer.sources_data import HOSTILE
from tests.knowledge.graph_data import chain, evidence_again, make_graph, mention_again
from tests.support import signed_in

pytestmark = pytest.mark.django_db


def panel(client, source: Source, target: str, **params: object):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return client.get(
        f"/sources/{source.pk}/?ws=acme&{query}",
        headers={"HX-Request": "true", "HX-Target": target},
    )


def rows(page: str, attribute: str) -> list[str]:
    """The ids of the rows of one panel, in order."""
    return re.findall(rf'<tr {attribute}="(\d+)"', page)


def test_the_page_lists_the_entities_and_relations_of_its_documents_most_mentioned_first(alice):
    built = make_graph(
        alice.workspace,
        entities={
            "Ada Lovelace": "person",
            "Analytical Engine": "product",
            "London": "location",
            HOSTILE: "concept",
            "Forgotten": "concept",
        },
        relations=[
            ("Ada Lovelace", "Analytical Engine", "created_by"),
            ("Ada Lovelace", "London", "located_in"),
        ],
    )
    ada, engine, london, hostile, forgotten = built.entities.values()
    other = make_graph(alice.workspace, entities={"Grace Hopper": "person"}, title="Other")
    mention_again(built, engine, 3)  # 4 mentions here
    mention_again(built, london, 1)  # 2
    mention_again(built, ada, 6, chunk=other.chunk)  # 1 here: the other source's don't count
    evidence_again(built, built.relations[1], 2)  # located_in: 3 evidence rows here
    do_refresh_derived(  # Ada's seven mentions in all put her before the other single one
        workspace_id=alice.workspace.pk,
        entity_ids=[e.pk for e in built.entities.values()],
        relation_ids=[r.pk for r in built.relations],
    )
    do_delete_entity(workspace=alice.workspace, entity_id=forgotten.pk)  # gone from the list

    page = signed_in(alice).get(f"/sources/{built.source.pk}/").content.decode()

    assert rows(page, "data-entity-id") == [str(e.pk) for e in (engine, london, ada, hostile)]
    assert "Grace Hopper" not in page and "Forgotten" not in page
    assert HOSTILE not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert re.findall(r"data-source-mentions>(\d+)<", page) == ["4", "2", "1", "1"]
    assert rows(page, "data-relation-id") == [str(r.pk) for r in reversed(built.relations)]
    assert re.findall(r"data-source-evidence>(\d+)<", page) == ["3", "1"]
    source = built.source.pk
    assert f'href="/explore/?ws=acme&amp;source={source}"' in page
    assert f'href="/entities/?ws=acme&amp;source={source}"' in page
    assert f'href="/explore/?ws=acme&amp;seeds={engine.pk}&amp;focus={engine.pk}"' in page
    ada_engine = built.relations[0]
    assert (
        f'href="/explore/?ws=acme&amp;seeds={ada.pk},{engine.pk}&amp;edge={ada_engine.pk}"' in page
    )
    # The other source lists its own: Grace, and Ada, who it names six times.
    theirs = signed_in(alice).get(f"/sources/{other.source.pk}/").content.decode()
    assert rows(theirs, "data-entity-id") == [str(ada.pk), str(other.entities["Grace Hopper"].pk)]


def test_the_entities_page_and_the_explorer_take_the_source_filter_the_page_links_to(alice):
    built = make_graph(alice.workspace, entities={"Ada Lovelace": "person"}, title="Harbour")
    other = make_graph(alice.workspace, entities={"Grace Hopper": "person"}, title="Other")
    client = signed_in(alice)
    entities = client.get(f"/entities/?ws=acme&source={built.source.pk}").content.decode()
    assert "Ada Lovelace" in entities and "Grace Hopper" not in entities
    assert client.get(f"/explore/?ws=acme&source={other.source.pk}").status_code == 200
    graph = client.get(f"/api/v1/workspaces/acme/graph?hubs=10&source={built.source.pk}").json()
    assert [node["name"] for node in graph["nodes"]] == ["Ada Lovelace"]


def test_each_panel_pages_by_htmx_and_keeps_the_others_page(alice):
    built = chain(alice.workspace, 30)  # 30 entities, 29 relations
    client = signed_in(alice)
    full = client.get(f"/sources/{built.source.pk}/").content.decode()
    assert len(rows(full, "data-entity-id")) == 25
    assert "Page 1 of 2" in full
    second = panel(client, built.source, "source-entities", ents=2, rels=2)
    body = second.content.decode()
    assert body.lstrip().startswith('<section id="source-entities"')  # the panel alone
    assert "source-relations" not in body
    assert len(rows(body, "data-entity-id")) == 5
    assert "Page 2 of 2" in body
    # Its pager loads the panel alone, and keeps the relations' page in its links.
    assert 'hx-target="#source-entities"' in body
    assert 'href="?ws=acme&amp;rels=2&amp;ents=1"' in body
    relations = panel(client, built.source, "source-relations", rels=2).content.decode()
    assert len(rows(relations, "data-relation-id")) == 4
    # Together, the two pages hold every entity once.
    first = rows(full, "data-entity-id")
    assert sorted(first + rows(body, "data-entity-id")) == sorted(
        str(e.pk) for e in built.entities.values()
    )


def test_the_panels_refresh_while_the_source_runs_and_stop_when_it_is_done(alice):
    built = make_graph(alice.workspace, entities={"Ada Lovelace": "person"})
    client = signed_in(alice)
    Source.objects.filter(pk=built.source.pk).update(status="running")
    running = panel(client, built.source, "source-relations").content.decode()
    assert 'hx-trigger="every 10s"' in running.split(">", 1)[0]
    Source.objects.filter(pk=built.source.pk).update(status="done")
    done = panel(client, built.source, "source-entities").content.decode()
    assert "hx-trigger" not in done.split(">", 1)[0]


def test_another_workspaces_source_and_its_panels_answer_404(alice, bob):
    theirs = make_graph(bob.workspace, entities={"Globex secret": "concept"}).source
    client = signed_in(alice)
    assert client.get(f"/sources/{theirs.pk}/").status_code == 404
    for target in ("source-entities", "source-relations"):
        response = panel(client, theirs, target)
        assert response.status_code == 404
        assert "Globex secret" not in response.content.decode()
