"""The Entities page (explorer/entities_views.py over knowledge/selectors/entity_table.py):
the table's filters, sorting, pages and word search, the CSV export, and the editors' bulk
actions with their undo, through Django's test client against graphs written into the real
tables.

Viewers read the page without controls and are refused (403) on every write; another
workspace's entity or event anywhere in a request makes it 404 with nothing done.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.http import QueryDict
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from explorer.entities_views import parse_filters
from knowledge.actions.curation.entities import do_delete_entity
from knowledge.models import (
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    RuleKind,
)
from knowledge.selectors.entity_table import PAGE_SIZE
from tests.knowledge.graph_data import chain, make_graph
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
DASH = "\N{EN DASH}"


@pytest.fixture
def editor(make_member):
    return make_member("erin", workspace="acme", role=Role.EDITOR)


@pytest.fixture
def viewer(make_member, editor):
    return make_member("vic", workspace="acme", role=Role.VIEWER)


@pytest.fixture
def graph(editor):
    """Ada (person), Acme (organization) and Paris (location), each related to the other
    two (degree 2), and Loner (concept, curated, no relation) in a first source; Ada
    Lovelace (person) in a second source, which also mentions Acme. Mentions and first and
    last seen differ per entity."""
    first = make_graph(
        editor.workspace,
        entities={"Ada": "person", "Acme": "organization", "Paris": "location",
                  "Loner": "concept"},
        relations=[("Ada", "Acme", "works_for"), ("Acme", "Paris", "located_in"),
                   ("Ada", "Paris", "visited")],
        title="First notes",
    )  # fmt: skip
    second = make_graph(
        editor.workspace, entities={"Ada Lovelace": "person"}, title="Second notes",
        path="second.txt",
    )  # fmt: skip
    entities = {**first.entities, **second.entities}
    now = timezone.now()
    figures = {  # name: (mentions, days since first seen, days since last seen, sources)
        "Ada": (7, 30, 1, [first.source.pk]),
        "Acme": (3, 60, 0, [first.source.pk, second.source.pk]),
        "Paris": (12, 10, 5, [first.source.pk]),
        "Loner": (1, 5, 5, [first.source.pk]),
        "Ada Lovelace": (2, 2, 2, [second.source.pk]),
    }
    for name, (mentions, first_days, last_days, sources) in figures.items():
        Entity.objects.filter(pk=entities[name].pk).update(
            mention_count=mentions,
            first_seen_at=now - timedelta(days=first_days),
            last_seen_at=now - timedelta(days=last_days),
            source_ids=sources,
        )
    Entity.objects.filter(pk=entities["Loner"].pk).update(curated=True)
    return {"entities": entities, "first": first.source, "second": second.source}


def ids(graph, *names: str) -> list[int]:
    return [graph["entities"][name].pk for name in names]


def page(client: Client, **params):
    return client.get(reverse("explorer:entities"), {"ws": "acme", **params})


def rows(response) -> list[int]:
    """The entity ids of the table's rows, in order."""
    return [int(pk) for pk in re.findall(r'<tr id="entity-(\d+)"', response.content.decode())]


def bulk(client: Client, data: dict, *, query: str = "ws=acme", htmx: bool = True):
    return client.post(
        f"{reverse('explorer:entities_bulk')}?{query}", data, headers=HTMX if htmx else {}
    )


def fresh(entity: Entity) -> Entity:
    return Entity.objects.select_related("type").get(pk=entity.pk)


# --- reading --------------------------------------------------------------------------------


def test_members_see_the_active_entities_by_name_with_their_figures_and_links(viewer, graph):
    response = page(signed_in(viewer))
    assert response.status_code == 200
    assert rows(response) == ids(graph, "Acme", "Ada", "Ada Lovelace", "Loner", "Paris")
    html = response.content.decode()
    assert 'aria-current="page">Entities' in html
    assert f"5 entities, showing 1{DASH}5." in html
    acme = graph["entities"]["Acme"].pk
    row = html[html.index(f'<tr id="entity-{acme}"') :]
    row = row[: row.index("</tr>")]
    cells = re.findall(r'<td class="number">([^<]*)</td>', row)
    assert cells == ["2", "3", "2"]  # degree, mentions, sources
    panel = reverse("explorer:entity_panel", args=[acme])
    assert f'hx-get="{panel}?ws=acme" hx-target="#panel"' in row
    assert f'href="{reverse("explorer:explore")}?ws=acme&amp;seeds={acme}&amp;focus={acme}"' in row
    assert '<aside id="panel"' in html


def test_viewers_see_no_selection_and_no_bulk_actions(viewer, editor, graph):
    html = page(signed_in(viewer)).content.decode()
    assert reverse("explorer:entities_bulk") not in html
    assert 'name="ids"' not in html and 'name="survivor"' not in html
    assert "Export CSV" in html
    editor_html = page(signed_in(editor)).content.decode()
    assert reverse("explorer:entities_bulk") in editor_html
    assert editor_html.count('name="ids"') == 5


def test_filters_by_types_state_curated_degree_and_source(editor, graph):
    client = signed_in(editor)
    assert rows(client.get(reverse("explorer:entities"),
                           {"ws": "acme", "type": ["person", "location"]})) == ids(
        graph, "Ada", "Ada Lovelace", "Paris"
    )  # fmt: skip
    assert rows(page(client, curated="yes")) == ids(graph, "Loner")
    assert rows(page(client, curated="no")) == ids(graph, "Acme", "Ada", "Ada Lovelace", "Paris")
    assert rows(page(client, min_degree="2")) == ids(graph, "Acme", "Ada", "Paris")
    assert rows(page(client, source=str(graph["second"].pk))) == ids(graph, "Acme", "Ada Lovelace")
    do_delete_entity(workspace=editor.workspace, entity_id=graph["entities"]["Loner"].pk)
    assert rows(page(client, state="deleted")) == ids(graph, "Loner")
    assert graph["entities"]["Loner"].pk not in rows(page(client))
    # Nonsense in a shared link is ignored rather than refused.
    assert len(rows(page(client, state="gone", curated="maybe", min_degree="x"))) == 4


def test_search_finds_any_word_with_one_typo_and_ranks_by_relevance(editor, graph):
    client = signed_in(editor)
    assert rows(page(client, q="lovelace")) == ids(graph, "Ada Lovelace")
    assert rows(page(client, q="lovelase")) == ids(graph, "Ada Lovelace")  # one typo
    # "ada": the whole name first (relevance), then the name starting with it.
    assert rows(page(client, q="ada")) == ids(graph, "Ada", "Ada Lovelace")
    assert rows(page(client, q="ada", sort="-mentions")) == ids(graph, "Ada", "Ada Lovelace")
    assert rows(page(client, q="ada", type="person", sort="-name")) == ids(
        graph, "Ada Lovelace", "Ada"
    )
    assert "No entities match." in page(client, q="zebra").content.decode()


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("-name", ["Paris", "Loner", "Ada Lovelace", "Ada", "Acme"]),
        ("type", ["Loner", "Paris", "Acme", "Ada", "Ada Lovelace"]),
        ("-degree", ["Paris", "Ada", "Acme", "Ada Lovelace", "Loner"]),
        ("degree", ["Loner", "Ada Lovelace", "Acme", "Ada", "Paris"]),
        ("-mentions", ["Paris", "Ada", "Acme", "Ada Lovelace", "Loner"]),
        ("mentions", ["Loner", "Ada Lovelace", "Acme", "Ada", "Paris"]),
        ("-sources", ["Acme", "Ada", "Ada Lovelace", "Loner", "Paris"]),
        ("first_seen", ["Acme", "Ada", "Paris", "Loner", "Ada Lovelace"]),
        ("-last_seen", ["Acme", "Ada", "Ada Lovelace", "Loner", "Paris"]),
    ],
)
def test_every_column_sorts(editor, graph, sort, expected):
    # Ties: degree falls to mentions (Paris 12 > Ada 7 > Acme 3 at degree 2), the rest to id.
    if sort == "-sources":
        expected = ["Acme", *sorted(["Ada", "Ada Lovelace", "Loner", "Paris"],
                                    key=lambda n: -graph["entities"][n].pk)]  # fmt: skip
    if sort == "-last_seen":
        expected = ["Acme", "Ada", "Ada Lovelace",
                    *sorted(["Loner", "Paris"], key=lambda n: -graph["entities"][n].pk)]  # fmt: skip
    assert rows(page(signed_in(editor), sort=sort)) == ids(graph, *expected)


def test_a_header_sorts_by_its_column_and_a_second_click_reverses_it(editor, graph):
    client = signed_in(editor)
    base = reverse("explorer:entities")
    html = page(client, type="person").content.decode()
    assert f'href="{base}?ws=acme&amp;type=person&amp;sort=-degree" data-sort="degree"' in html
    assert f'href="{base}?ws=acme&amp;type=person&amp;sort=-name" data-sort="name"' in html
    assert 'aria-sort="ascending"' in html
    html = page(client, type="person", sort="-degree").content.decode()
    assert f'href="{base}?ws=acme&amp;type=person&amp;sort=degree" data-sort="degree"' in html
    assert html.count('aria-sort="descending"') == 1


@pytest.mark.parametrize(
    ("query", "sort", "descending", "curated"),
    [
        ("sort=-degree&curated=yes", "degree", True, "yes"),
        ("sort=bogus&curated=maybe", "name", False, ""),
        ("sort=-relevance&curated=no", "name", False, "no"),
        ("q=ada&sort=-relevance", "relevance", True, ""),
        ("q=ada&sort=bogus", "relevance", False, ""),
        ("q=ada&sort=-name", "name", True, ""),
    ],
)
def test_a_sort_or_curated_filter_that_makes_no_sense_falls_back(query, sort, descending, curated):
    """Relevance sorts only a search and is its default; name is everyone else's."""
    filters = parse_filters(QueryDict(query))
    assert (filters.sort, filters.descending, filters.curated) == (sort, descending, curated)


def test_pages_of_fifty_with_the_total_and_links_that_keep_the_filters(editor):
    chain(editor.workspace, 120, prefix="Node")
    client = signed_in(editor)
    first, third = page(client), page(client, page="3")
    assert len(rows(first)) == PAGE_SIZE and len(rows(third)) == 20
    second = page(client, page="2")
    assert not set(rows(first)) & set(rows(second))
    assert len(set(rows(first)) | set(rows(second)) | set(rows(third))) == 120
    html = second.content.decode()
    assert f"120 entities, showing 51{DASH}100." in html and "Page 2 of 3" in html
    base = reverse("explorer:entities")
    assert f'href="{base}?ws=acme&amp;sort=name&amp;page=3" rel="next"' in html
    assert f'href="{base}?ws=acme&amp;sort=name&amp;page=1" rel="prev"' in html
    # Past the end: the last page.
    assert rows(page(client, page="99")) == rows(third)
    filtered = page(client, q="node", min_degree="2", sort="-name", page="2").content.decode()
    assert f"{base}?ws=acme&amp;q=node&amp;min_degree=2&amp;sort=-name&amp;page=3" in filtered


# --- the export -----------------------------------------------------------------------------


def export(client: Client, **params) -> list[list[str]]:
    response = client.get(reverse("explorer:entities_export"), {"ws": "acme", **params})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="entities-acme.csv"' in response["Content-Disposition"]
    text = response.getvalue().decode()
    return list(csv.reader(io.StringIO(text)))


def test_the_export_has_every_matching_row_in_the_page_order(viewer, graph):
    table = export(signed_in(viewer), type="person", sort="-mentions")
    assert table[0] == ["id", "name", "type", "degree", "mentions", "sources", "first_seen",
                        "last_seen", "state", "curated"]  # fmt: skip
    ada = fresh(graph["entities"]["Ada"])
    assert ada.first_seen_at is not None and ada.last_seen_at is not None
    assert table[1] == [str(ada.pk), "Ada", "person", "2", "7", "1",
                        ada.first_seen_at.isoformat(), ada.last_seen_at.isoformat(), "active",
                        "no"]  # fmt: skip
    assert [row[1] for row in table[1:]] == ["Ada", "Ada Lovelace"]


def test_the_export_is_not_paged(viewer):
    chain(viewer.workspace, 120, prefix="Node")
    assert len(export(signed_in(viewer))) == 121


def test_cells_that_start_like_a_formula_are_quoted(editor):
    hostile = ['=HYPERLINK("http://evil")', "+1+2", "-2+3", "@SUM(A1)", "\tTab", "Plain =1"]
    make_graph(editor.workspace, entities=dict.fromkeys(hostile, "concept"))
    names = {row[1] for row in export(signed_in(editor))[1:]}
    assert names == {"'=HYPERLINK(\"http://evil\")", "'+1+2", "'-2+3", "'@SUM(A1)", "'\tTab",
                     "Plain =1"}  # fmt: skip


# --- who may do what ------------------------------------------------------------------------


def test_viewers_are_refused_every_write_and_nothing_changes(viewer, graph):
    client = signed_in(viewer)
    two = ids(graph, "Ada", "Ada Lovelace")
    for data in ({"action": "merge", "ids": two}, {"action": "delete", "ids": two},
                 {"action": "block", "ids": two}, {"action": "retype", "ids": two,
                                                   "type": "concept"},
                 {"action": "restore", "ids": two}, {"action": "unmerge", "event": 1}):  # fmt: skip
        assert bulk(client, data).status_code == 403
        assert bulk(client, data, htmx=False).status_code == 403
    assert not CurationEvent.objects.exists()
    assert Entity.objects.filter(state=EntityState.ACTIVE).count() == 5


def test_another_workspaces_ids_are_missing_and_nothing_is_done(editor, bob, graph):
    theirs = make_graph(bob.workspace, entities={"Ada": "person"}).entities["Ada"]
    client = signed_in(editor)
    mine = ids(graph, "Ada", "Ada Lovelace")
    for action in ("merge", "delete", "block", "restore"):
        response = bulk(client, {"action": action, "ids": [*mine, theirs.pk]})
        assert response.status_code == 404
    assert (
        bulk(client, {"action": "retype", "ids": [theirs.pk], "type": "concept"}).status_code == 404
    )
    their_event = do_delete_entity(workspace=bob.workspace, entity_id=theirs.pk)
    assert bulk(client, {"action": "unblock", "event": their_event.pk}).status_code == 404
    assert bulk(client, {"action": "unmerge", "event": their_event.pk}).status_code == 404
    assert not CurationEvent.objects.filter(workspace=editor.workspace).exists()
    assert fresh(theirs).state == EntityState.DELETED  # bob's own delete, untouched since
    # Nor can anyone outside acme read its table or export.
    assert signed_in(bob).get(reverse("explorer:entities"), {"ws": "acme"}).status_code == 404
    response = signed_in(bob).get(reverse("explorer:entities_export"), {"ws": "acme"})
    assert response.status_code == 404
    assert Client().get(reverse("explorer:entities"), {"ws": "acme"}).status_code == 302


# --- bulk actions and their undo -------------------------------------------------------------


def test_merge_keeps_the_chosen_survivor_and_undo_unmerges(editor, graph):
    client = signed_in(editor)
    ada, lovelace = graph["entities"]["Ada"], graph["entities"]["Ada Lovelace"]
    response = bulk(client, {"action": "merge", "ids": [ada.pk, lovelace.pk],
                             "survivor": lovelace.pk}, query="ws=acme&type=person")  # fmt: skip
    assert response.status_code == 200
    html = response.content.decode()
    assert "Merged &#x27;Ada&#x27; into &#x27;Ada Lovelace&#x27;" in html
    assert fresh(ada).state == EntityState.MERGED and fresh(ada).merged_into_id == lovelace.pk
    event = CurationEvent.objects.get(action=CurationAction.MERGE)
    assert event.actor == editor.user
    # The answer is the table as its query string shows it: the merged row is gone.
    assert rows(response) == [lovelace.pk]
    assert '<div id="entities-results"' in html and "<h1>" not in html
    assert 'name="action" value="unmerge"' in html and f'name="event" value="{event.pk}"' in html

    undone = bulk(client, {"action": "unmerge", "event": event.pk}, query="ws=acme&type=person")
    assert undone.status_code == 200
    assert "Undid merge" in undone.content.decode()
    assert fresh(ada).state == EntityState.ACTIVE
    assert rows(undone) == [ada.pk, lovelace.pk]
    event.refresh_from_db()
    assert event.undone_by_id is not None


def test_merge_refuses_a_survivor_outside_the_selection(editor, graph):
    client = signed_in(editor)
    response = bulk(client, {"action": "merge", "ids": ids(graph, "Ada", "Ada Lovelace"),
                             "survivor": graph["entities"]["Paris"].pk})  # fmt: skip
    assert response.status_code == 200
    assert "Choose the entity to keep among the selected ones." in response.content.decode()
    assert not CurationEvent.objects.exists()
    plain = bulk(client, {"action": "merge", "ids": ids(graph, "Ada")}, htmx=False)
    assert plain.status_code == 422
    assert "Merging needs at least two different entities." in plain.content.decode()


def test_retype_changes_each_and_reports_the_one_that_clashes(editor, graph):
    client = signed_in(editor)
    # An organization "Paris" would clash with nothing; a person "Ada" exists already as
    # the clash for a second "Ada" of type organization.
    clash = make_graph(editor.workspace, entities={"Ada": "organization"}, title="Third")
    other_ada = clash.entities["Ada"]
    response = bulk(client, {"action": "retype", "type": "person",
                             "ids": [*ids(graph, "Paris", "Loner"), other_ada.pk]})  # fmt: skip
    html = response.content.decode()
    assert response.status_code == 200
    assert "Retyped 2 entities to person; 1 entity could not be." in html
    assert "is that type already: merge them." in html
    assert fresh(graph["entities"]["Paris"]).type.name == "person"
    assert fresh(graph["entities"]["Loner"]).type.name == "person"
    assert fresh(other_ada).type.name == "organization"
    assert 'name="action" value="unmerge"' not in html  # retype has no undo here
    assert (
        "Choose the type to give them."
        in bulk(client, {"action": "retype", "ids": ids(graph, "Ada")}).content.decode()
    )


def test_delete_hides_each_and_undo_restores_them(editor, graph):
    client = signed_in(editor)
    paris, loner = graph["entities"]["Paris"], graph["entities"]["Loner"]
    do_delete_entity(workspace=editor.workspace, entity_id=graph["entities"]["Acme"].pk)
    response = bulk(client, {"action": "delete", "ids": [paris.pk, loner.pk]})
    html = response.content.decode()
    assert "Deleted 2 entities." in html
    assert fresh(paris).state == fresh(loner).state == EntityState.DELETED
    assert paris.pk not in rows(response) and loner.pk not in rows(response)
    assert 'name="action" value="restore"' in html
    assert f'name="ids" value="{paris.pk}"' in html
    # The deleted ones' table offers Restore alone; merged ones come back by their undo.
    deleted = page(client, state="deleted").content.decode()
    assert 'value="restore"' in deleted and 'value="merge"' not in deleted
    merged = page(client, state="merged").content.decode()
    assert reverse("explorer:entities_bulk") not in merged

    restored = bulk(client, {"action": "restore", "ids": [paris.pk, loner.pk]})
    assert "Restored 2 entities." in restored.content.decode()
    assert fresh(paris).state == fresh(loner).state == EntityState.ACTIVE
    assert {paris.pk, loner.pk} <= set(rows(restored))
    # One already deleted among the selection: reported, the others done.
    again = bulk(client, {"action": "delete", "ids": ids(graph, "Acme", "Paris")})
    text = again.content.decode()
    assert "Deleted 1 entity; 1 entity could not be." in text
    assert "<strong>Acme</strong>: &#x27;Acme&#x27; is deleted." in text


def test_block_deletes_and_blocks_every_name_and_undo_lifts_them(editor, graph):
    client = signed_in(editor)
    paris, loner = graph["entities"]["Paris"], graph["entities"]["Loner"]
    response = bulk(client, {"action": "block", "ids": [paris.pk, loner.pk]})
    html = response.content.decode()
    assert "Deleted 2 entities and blocked their names in every type." in html
    blocks = list(CurationEvent.objects.filter(action=CurationAction.BLOCK).order_by("pk"))
    assert len(blocks) == 2
    assert CurationRule.objects.filter(kind=RuleKind.BLOCKED, active=True,
                                       entity_type=None).count() == 2  # fmt: skip
    assert 'name="action" value="unblock"' in html
    for block in blocks:
        assert f'name="event" value="{block.pk}"' in html

    undone = bulk(client, {"action": "unblock", "event": [b.pk for b in blocks]})
    assert "Undid 2 actions." in undone.content.decode()
    assert fresh(paris).state == fresh(loner).state == EntityState.ACTIVE
    assert not CurationRule.objects.filter(kind=RuleKind.BLOCKED, active=True).exists()


def test_a_plain_form_post_gets_the_page_with_the_outcome(editor, graph):
    response = bulk(signed_in(editor), {"action": "delete", "ids": ids(graph, "Loner")},
                    query="ws=acme&sort=-degree", htmx=False)  # fmt: skip
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Entities of Acme</h1>" in html and "Deleted 1 entity." in html
    assert rows(response) == ids(graph, "Paris", "Ada", "Acme", "Ada Lovelace")


def test_requests_without_a_selection_or_an_action_are_refused_with_a_reason(editor, graph):
    client = signed_in(editor)
    assert "Select the entities first." in bulk(client, {"action": "delete"}).content.decode()
    refused = bulk(client, {"action": "explode", "ids": ids(graph, "Ada")}, htmx=False)
    assert refused.status_code == 422
    assert bulk(client, {"action": "delete", "ids": ["1; drop"]}, htmx=False).status_code == 422
    assert not CurationEvent.objects.exists()


def test_hostile_names_render_as_text_in_the_table_and_the_outcome(editor):
    script = "<script>alert(1)</script>"
    built = make_graph(
        editor.workspace, entities={script: "concept", '" onmouseover="x': "concept"}
    )
    client = signed_in(editor)
    html = page(client).content.decode()
    assert script not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '" onmouseover="x' not in html
    response = bulk(client, {"action": "delete", "ids": [e.pk for e in built.entities.values()]})
    outcome = response.content.decode()
    assert "Deleted 2 entities." in outcome
    assert script not in outcome
