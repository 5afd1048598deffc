"""The review page (explorer/review_views.py): open merge suggestions side by side with
their evidence, accepted, rejected and undone through Django's test client against real
graphs; another workspace's suggestions are missing (404); hostile names render as text.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from knowledge.models import (
    CurationAction,
    CurationEvent,
    Entity,
    MergeSuggestion,
    SuggestionStatus,
)
from tests.knowledge.graph_data import make_graph
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
SCRIPT = "<script>alert(1)</script>"
ATTRIBUTE = '" onmouseover="x'


@pytest.fixture
def editor(make_member):
    return make_member("erin", workspace="acme", role=Role.EDITOR)


@pytest.fixture
def graph(editor):
    built = make_graph(
        editor.workspace,
        entities={
            "Google": "organization",
            "Alphabet": "organization",
            "Larry Page": "person",
            "Sergey Brin": "person",
        },
        relations=[
            ("Larry Page", "Google", "founded"),
            ("Sergey Brin", "Google", "founded"),
            ("Google", "Alphabet", "part_of"),
        ],
    )
    return built.entities


def graph_changed(response) -> dict:
    return json.loads(response["HX-Trigger"])["graphloom:graph-changed"]


def fresh(entity: Entity) -> Entity:
    return Entity.objects.select_related("type").get(pk=entity.pk)


def events() -> list[str]:
    return list(CurationEvent.objects.order_by("pk").values_list("action", flat=True))


def suggest(workspace, a: Entity, b: Entity, score: float = 0.8, reasons=("token-set 0.80",)):
    low, high = sorted([a.pk, b.pk])
    return MergeSuggestion.objects.create(
        workspace=workspace, entity_a_id=low, entity_b_id=high, score=score, reasons=list(reasons)
    )


def test_the_review_page_shows_both_entities_with_evidence_reasons_and_score(editor, graph):
    suggest(editor.workspace, graph["Google"], graph["Alphabet"], 0.83, ["trigram 0.83"])
    page = signed_in(editor).get(reverse("explorer:review"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "“Google” and “Alphabet”" in html or "“Alphabet” and “Google”" in html
    assert "<mark>Google</mark> appears here." in html
    assert "<mark>Alphabet</mark> appears here." in html
    assert "trigram 0.83" in html
    assert "0.83" in html
    assert 'aria-current="page">Review</a>' in html
    assert "css/curation.css" in html


def test_the_review_page_has_an_empty_state_and_pages(editor):
    client = signed_in(editor)
    assert "Nothing to review" in client.get(reverse("explorer:review")).content.decode()
    names = {f"Acme {i:02d}": "organization" for i in range(13)}
    entities = list(make_graph(editor.workspace, entities=names).entities.values())
    for i, other in enumerate(entities[1:]):
        suggest(editor.workspace, entities[0], other, score=0.9 - i / 100)
    first = client.get(reverse("explorer:review")).content.decode()
    assert first.count('class="card review-item"') == 10
    assert "Page 1 of 2 (12 suggestions)" in first
    second = client.get(reverse("explorer:review"), {"page": 2}).content.decode()
    assert second.count('class="card review-item"') == 2


def test_accepting_a_suggestion_merges_the_pair_and_undo_separates_them(editor, graph):
    google, alphabet = graph["Google"], graph["Alphabet"]
    suggestion = suggest(editor.workspace, google, alphabet)
    client = signed_in(editor)
    accept = reverse("explorer:review_accept", args=[suggestion.pk])
    response = client.post(accept, {"into": alphabet.pk}, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="suggestion-{suggestion.pk}"' in html
    assert "Merged &#x27;Google&#x27; into &#x27;Alphabet&#x27;" in html
    assert fresh(google).state == "merged"
    assert fresh(google).merged_into_id == alphabet.pk
    suggestion.refresh_from_db()
    assert suggestion.status == SuggestionStatus.ACCEPTED
    assert graph_changed(response) == {"entity": alphabet.pk, "removed": [google.pk]}
    merge = CurationEvent.objects.get(action=CurationAction.MERGE)
    assert f'name="event" value="{merge.pk}"' in html

    twice = client.post(accept, headers=HTMX)
    assert "was accepted already" in twice.content.decode()

    undo = client.post(
        reverse("explorer:review_undo", args=[suggestion.pk]), {"event": merge.pk}, headers=HTMX
    )
    assert undo.status_code == 200
    assert "Undid merge" in undo.content.decode()
    assert fresh(google).state == "active"
    assert events() == [CurationAction.MERGE, CurationAction.UNMERGE]


def test_rejecting_a_suggestion_keeps_the_pair_apart(editor, graph):
    google, page = graph["Google"], graph["Larry Page"]
    suggestion = suggest(editor.workspace, google, page)
    client = signed_in(editor)
    response = client.post(reverse("explorer:review_reject", args=[suggestion.pk]), headers=HTMX)
    assert response.status_code == 200
    assert "is not" in response.content.decode()
    suggestion.refresh_from_db()
    assert suggestion.status == SuggestionStatus.REJECTED
    assert fresh(google).state == fresh(page).state == "active"
    assert events() == [CurationAction.NOT_SAME]
    assert "Nothing to review" in client.get(reverse("explorer:review")).content.decode()


def test_review_forms_work_without_htmx_and_report_through_messages(editor, graph):
    suggestion = suggest(editor.workspace, graph["Google"], graph["Alphabet"])
    client = signed_in(editor)
    accept = reverse("explorer:review_accept", args=[suggestion.pk])
    response = client.post(accept, follow=True)
    assert response.redirect_chain[-1][0] == reverse("explorer:review")
    assert "Merged" in response.content.decode()
    again = client.post(accept, follow=True)
    assert "was accepted already" in again.content.decode()


def test_review_of_another_workspaces_suggestion_is_missing(editor, bob):
    theirs = make_graph(
        bob.workspace, entities={"Initech": "organization", "Initrode": "organization"}
    )
    suggestion = suggest(bob.workspace, theirs.entities["Initech"], theirs.entities["Initrode"])
    client = signed_in(editor)
    assert client.post(reverse("explorer:review_accept", args=[suggestion.pk])).status_code == 404
    assert client.post(reverse("explorer:review_reject", args=[suggestion.pk])).status_code == 404
    suggestion.refresh_from_db()
    assert suggestion.status == SuggestionStatus.OPEN


def test_hostile_names_render_as_text_on_the_review_page(editor):
    hostile = make_graph(
        editor.workspace, entities={SCRIPT: "person", ATTRIBUTE: "person"}, title=SCRIPT
    ).entities
    suggest(editor.workspace, hostile[SCRIPT], hostile[ATTRIBUTE], reasons=[SCRIPT])
    html = signed_in(editor).get(reverse("explorer:review")).content.decode()
    assert SCRIPT not in html
    assert ATTRIBUTE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&quot; onmouseover=&quot;x" in html
