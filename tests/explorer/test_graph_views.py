"""The explorer page and the entity and relation panels: who may
see what, what the panels show, that untrusted text stays text, and the payloads."""

from __future__ import annotations

from typing import cast

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client, RequestFactory
from django_htmx.middleware import HtmxDetails

from explorer.graph_views import render_entity_panel
from explorer.workspace_pages import WorkspaceRequest
from knowledge.models import Entity, EntityState
from tests.knowledge.graph_data import make_graph, make_lab_graph
from tests.support import signed_in
from workspaces.models import Membership, Role

pytestmark = pytest.mark.django_db

HOSTILE = '<img src=x onerror="alert(1)">'
SCRIPT = "<script>alert('pwn')</script>"


@pytest.fixture
def lab(make_member):
    """A viewer of workspace "lab" with a small graph: Ada works for Acme, Acme is in Paris."""
    member = make_member("ada", workspace="lab", role=Role.VIEWER)
    return member, make_lab_graph(member.workspace)


def test_the_explore_page_renders_for_a_viewer_with_its_module_config(lab):
    member, _ = lab
    response = signed_in(member).get("/explore/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="graph-canvas"' in html
    assert 'data-workspace="lab"' in html
    assert 'data-worker-url="/static/js/graph/layout-worker.js"' in html
    assert 'data-api="/api/v1/workspaces/lab"' in html
    assert "js/graph/main.js" in html
    assert 'id="panel"' in html
    # The filters list the workspace's types that are in use, most used first.
    assert 'name="type" value="person"' in html
    assert 'name="rtype" value="works_for"' in html
    assert 'aria-current="page">Explore' in html


def test_the_explore_page_carries_the_active_entity_count_and_the_map_threshold(lab, settings):
    """The page decides between the community map and the hubs from these, with no request
    first: merged and deleted entities do not count."""
    settings.EXPLORER_MAP_ABOVE = 1234
    member, _ = lab
    entities = Entity.objects.filter(workspace=member.workspace)
    active = entities.count()
    entities.filter(pk=entities.order_by("pk")[0].pk).update(state=EntityState.DELETED)
    html = signed_in(member).get("/explore/").content.decode()
    assert 'data-map-above="1234"' in html
    assert f'data-entity-count="{active - 1}"' in html


def test_the_explore_page_needs_sign_in():
    response = Client().get("/explore/")
    assert response.status_code == 302


def test_the_entity_panel_shows_details_relations_and_highlighted_evidence(lab):
    member, built = lab
    acme = built.entities["Acme"]
    response = signed_in(member).get(f"/panels/entity/{acme.pk}/", headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html  # the partial alone for htmx
    assert f'data-panel-entity="{acme.pk}"' in html
    assert 'id="panel-title"' in html and ">Acme</h2>" in html
    assert "organization" in html
    # Relations grouped by type, each linking to the other end's panel.
    assert "works_for" in html and "located_in" in html
    ada, paris = built.entities["Ada"], built.entities["Paris"]
    assert f'hx-get="/panels/entity/{ada.pk}/?ws=lab"' in html
    assert f'hx-get="/panels/entity/{paris.pk}/?ws=lab"' in html
    # Evidence: the mention marked, and a link to the document at its span.
    assert "<mark>Acme</mark> appears here." in html
    start = built.document.text.find("Acme appears here.")
    assert f"/documents/{built.document.pk}/?start={start}&amp;end={start + 4}&amp;ws=lab" in html
    assert "Fixture notes" in html


def test_the_entity_panel_opened_directly_is_a_page_with_the_panel(lab):
    member, built = lab
    response = signed_in(member).get(f"/panels/entity/{built.entities['Ada'].pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html
    assert 'id="panel"' in html
    assert "Show in the graph" in html


def test_the_relation_panel_shows_both_ends_and_its_evidence(lab):
    member, built = lab
    relation = built.relations[0]
    response = signed_in(member).get(
        f"/panels/relation/{relation.pk}/", headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert f'data-panel-relation="{relation.pk}"' in html
    assert "works_for" in html
    assert "<mark>Ada works_for Acme.</mark>" in html
    assert f'data-entity-link="{built.entities["Ada"].pk}"' in html
    assert f'data-entity-link="{built.entities["Acme"].pk}"' in html


def test_panels_of_another_workspaces_entity_or_relation_are_404(lab, bob):
    _, built = lab
    stranger = signed_in(bob)
    assert stranger.get(f"/panels/entity/{built.entities['Ada'].pk}/").status_code == 404
    assert stranger.get(f"/panels/relation/{built.relations[0].pk}/").status_code == 404
    assert stranger.get("/panels/entity/999999999/").status_code == 404
    # Nor does naming the workspace help someone who is not a member of it.
    assert stranger.get(f"/panels/entity/{built.entities['Ada'].pk}/?ws=lab").status_code == 404


def test_panels_render_hostile_names_descriptions_and_evidence_as_text(make_member):
    member = make_member("eve", workspace="lab", role=Role.VIEWER)
    built = make_graph(
        member.workspace,
        entities={HOSTILE: "person", SCRIPT: "organization"},
        relations=[(HOSTILE, SCRIPT, "works_for")],
        title='<b onmouseover="alert(2)">Doc</b>',
    )
    entity = built.entities[HOSTILE]
    Entity.objects.filter(pk=entity.pk).update(aliases=[SCRIPT])
    client = signed_in(member)
    for url in (
        f"/panels/entity/{entity.pk}/",
        f"/panels/relation/{built.relations[0].pk}/",
        f"/panels/entity/{built.entities[SCRIPT].pk}/",
    ):
        for headers in ({}, {"HX-Request": "true"}):
            html = client.get(url, headers=headers).content.decode()
            assert "<img src=x" not in html
            assert "<script>alert" not in html
            assert "<b onmouseover" not in html
            assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
            assert "&lt;script&gt;alert(&#x27;pwn&#x27;)&lt;/script&gt;" in html
    html = client.get(
        f"/panels/entity/{entity.pk}/", headers={"HX-Request": "true"}
    ).content.decode()
    assert "<mark>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</mark>" in html
    page = client.get("/explore/").content.decode()
    assert "<img src=x" not in page


def test_render_entity_panel_renders_the_current_workspaces_entity_with_a_status(lab):
    member, built = lab
    membership = Membership.objects.get(user=member.user, workspace=member.workspace)
    # Set up as the middleware and workspace_page would.
    request = cast(WorkspaceRequest, RequestFactory().get("/", headers={"HX-Request": "true"}))
    request.user = member.user
    request.session = SessionStore()
    request.membership = membership
    request.htmx = HtmxDetails(request)
    response = render_entity_panel(request, built.entities["Paris"].pk, status=201)
    assert response.status_code == 201
    html = response.content.decode()
    assert f'data-panel-entity="{built.entities["Paris"].pk}"' in html
    assert "<html" not in html


def test_render_entity_panel_says_when_an_entity_was_merged(lab):
    member, built = lab
    ada, acme = built.entities["Ada"], built.entities["Acme"]
    Entity.objects.filter(pk=ada.pk).update(state=EntityState.MERGED, merged_into=acme)
    html = signed_in(member).get(f"/panels/entity/{ada.pk}/", headers={"HX-Request": "true"})
    text = html.content.decode()
    assert "Merged into" in text
    assert f'hx-get="/panels/entity/{acme.pk}/?ws=lab"' in text
    assert 'data-panel-state="merged"' in text
    assert "data-expand" not in text
