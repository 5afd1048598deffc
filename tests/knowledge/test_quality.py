"""The quality report (knowledge/selectors/quality.py) through its three faces: the API,
`manage.py quality`, and the quality page with its Delete and Block buttons.

The graph is written into the real tables (tests/knowledge/graph_data.py) so every figure
is known exactly: two sources, one with a second chunk that overlaps the first (its
repeated words count once) and a boilerplate chunk (skipped: counted as such, its words
not). Which names are suspicious is the extractor's noise filter's call; the test checks
its preconditions instead of guessing its word list.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from ingest.models import Chunk, Source
from knowledge.actions.resolution import resolve_entities
from knowledge.extraction.noise import near_miss
from knowledge.models import (
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    EntityType,
    Mention,
    RuleKind,
)
from tests.knowledge.graph_data import Built, make_graph
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
TAIL = "Jonas Lindqvist explained the Module. The Module runs everywhere."
BOILERPLATE = "Home | Next | Previous | Contents | Search this site"


def words(text: str) -> int:
    """Words as the report counts them: runs of non-space characters with a letter or digit."""
    return sum(1 for token in text.split() if re.search(r"[^\W_]", token))


@dataclass
class Lab:
    first: Built
    second: Built
    overlap_chunk: Chunk
    boilerplate_chunk: Chunk
    first_words: int
    second_words: int

    def entity(self, name: str) -> Entity:
        return Entity.objects.select_related("type").get(name=name)


def mention(built: Built, chunk: Chunk, entity: Entity, start: int) -> None:
    Mention.objects.create(
        workspace=entity.workspace, entity=entity, chunk=chunk, run=built.run,
        surface_form=entity.name, extracted_type=entity.type.name,
        char_start=start, char_end=start + len(entity.name),
    )  # fmt: skip


def build_lab(workspace) -> Lab:
    first = make_graph(
        workspace,
        entities={
            "Module": "concept",
            "Jonas Lindqvist": "person",
            "Widget": "product",
            "Charles Babbage": "person",
        },
        relations=[
            ("Jonas Lindqvist", "Widget", "created_by"),
            ("Charles Babbage", "Widget", "related_to"),
        ],
        title="First notes",
        path="first.txt",
    )
    # A second chunk repeating the first one's last line (the chunker's overlap), and a
    # boilerplate chunk after it.
    document, chunk = first.document, first.chunk
    last = chunk.text.splitlines()[-1]
    text = f"{chunk.text}\n{TAIL}\n{BOILERPLATE}"
    start = len(chunk.text) - len(last)
    overlap_text = f"{last}\n{TAIL}"
    overlap = Chunk.objects.create(
        workspace=workspace, document=document, ordinal=1, text=overlap_text,
        char_start=start, char_end=start + len(overlap_text), token_count=20,
        content_hash="b" * 64,
    )  # fmt: skip
    assert text[overlap.char_start : overlap.char_end] == overlap.text
    boiler_start = text.index(BOILERPLATE)
    boilerplate = Chunk.objects.create(
        workspace=workspace, document=document, ordinal=2, text=BOILERPLATE,
        char_start=boiler_start, char_end=len(text), token_count=10, content_hash="c" * 64,
        boilerplate=True,
    )  # fmt: skip
    document.text = text
    document.save(update_fields=["text"])
    module, lindqvist = first.entities["Module"], first.entities["Jonas Lindqvist"]
    tail_at = text.index(TAIL)
    mention(first, overlap, lindqvist, tail_at)
    mention(first, overlap, module, tail_at + TAIL.index("Module"))
    mention(first, overlap, module, tail_at + TAIL.rindex("Module"))
    Entity.objects.filter(pk=module.pk).update(mention_count=3)
    Entity.objects.filter(pk=lindqvist.pk).update(mention_count=2)

    second = make_graph(
        workspace,
        entities={"Engine": "concept", "Zorblax Corp": "organization"},
        relations=[("Zorblax Corp", "Engine", "uses")],
        title="Second notes",
        path="second.txt",
    )
    return Lab(
        first=first,
        second=second,
        overlap_chunk=overlap,
        boilerplate_chunk=boilerplate,
        first_words=words(f"{chunk.text}\n{TAIL}"),
        second_words=words(second.chunk.text),
    )


@pytest.fixture
def lab(alice) -> Lab:
    # The noise filter's verdicts the expectations below rest on.
    for name in ("Module", "Widget", "Engine"):
        assert near_miss(name), name
    for name in ("Jonas Lindqvist", "Charles Babbage", "Zorblax Corp"):
        assert near_miss(name) is None, name
    return build_lab(alice.workspace)


@pytest.fixture
def editor(make_member, alice):
    return make_member("erin", workspace="acme", role=Role.EDITOR)


@pytest.fixture
def viewer(make_member, alice):
    return make_member("vic", workspace="acme", role=Role.VIEWER)


def figure(count: int, total: int) -> dict:
    return {"count": count, "total": total, "share": round(count / total, 4) if total else None}


# --- The API -----------------------------------------------------------------------------


def test_the_workspace_report_counts_every_figure(alice, lab):
    response = alice.client().get("/api/v1/workspaces/acme/quality")
    assert response.status_code == 200, response.content
    report = response.json()
    total_words = lab.first_words + lab.second_words
    assert {k: v for k, v in report.items() if k != "suspicious"} == {
        "workspace": "acme",
        "source": None,
        "entities": 6,
        "mentions": 9,
        "relations": 3,
        "chunks": 4,
        "words": total_words,
        "in_two_or_more_chunks": figure(2, 6),  # Module and Jonas Lindqvist
        "singletons": figure(4, 6),
        "orphans": figure(1, 6),  # Module: no relation
        "entities_per_1000_words": round(6 * 1000 / total_words, 2),
        "typed_relations": figure(2, 3),  # created_by and uses; not related_to
        "boilerplate_chunks": figure(1, 4),
    }
    module, widget, engine = (lab.entity(n) for n in ("Module", "Widget", "Engine"))
    # Most mentioned first, then oldest.
    assert report["suspicious"] == [
        {"id": e.pk, "name": e.name, "type": e.type.name, "state": "active",
         "mentions": e.mention_count, "reason": near_miss(e.name)}
        for e in (module, widget, engine)
    ]  # fmt: skip


def test_a_source_report_counts_only_what_that_source_contributed(alice, lab):
    first = alice.client().get(f"/api/v1/workspaces/acme/quality?source={lab.first.source.pk}")
    report = first.json()
    assert report["source"] == {"id": lab.first.source.pk, "name": "First notes"}
    assert report["entities"] == 4
    assert report["mentions"] == 7
    assert report["words"] == lab.first_words
    assert report["chunks"] == 3
    assert report["boilerplate_chunks"] == figure(1, 3)
    assert report["in_two_or_more_chunks"] == figure(2, 4)
    assert report["singletons"] == figure(2, 4)
    assert report["orphans"] == figure(1, 4)
    assert report["typed_relations"] == figure(1, 2)
    assert [row["name"] for row in report["suspicious"]] == ["Module", "Widget"]
    assert report["suspicious"][0]["mentions"] == 3

    second = alice.client().get(f"/api/v1/workspaces/acme/quality?source={lab.second.source.pk}")
    report = second.json()
    assert (report["entities"], report["relations"], report["words"]) == (
        2, 1, lab.second_words,
    )  # fmt: skip
    assert report["orphans"] == figure(0, 2)
    assert report["typed_relations"] == figure(1, 1)
    assert report["boilerplate_chunks"] == figure(0, 1)
    assert [row["name"] for row in report["suspicious"]] == ["Engine"]


def test_an_entity_of_the_source_related_only_by_another_source_is_an_orphan_there(alice, lab):
    # Zorblax Corp's only relation is evidenced in the second source: mentioned by the first
    # too, it has no relation there.
    zorblax = lab.entity("Zorblax Corp")
    text = lab.first.document.text
    mention(lab.first, lab.first.chunk, zorblax, text.index("Widget appears"))
    report = (
        alice.client().get(f"/api/v1/workspaces/acme/quality?source={lab.first.source.pk}").json()
    )
    assert report["entities"] == 5
    assert report["orphans"] == figure(2, 5)


def test_an_empty_workspace_has_no_shares_and_no_suspicious_names(alice):
    report = alice.client().get("/api/v1/workspaces/acme/quality").json()
    assert report["entities"] == report["words"] == report["chunks"] == 0
    assert report["singletons"] == {"count": 0, "total": 0, "share": None}
    assert report["entities_per_1000_words"] is None
    assert report["suspicious"] == []


def test_viewers_read_it_and_other_workspaces_get_nothing(alice, viewer, bob, lab):
    assert viewer.client().get("/api/v1/workspaces/acme/quality").status_code == 200
    assert bob.client().get("/api/v1/workspaces/acme/quality").status_code == 404
    assert Client().get("/api/v1/workspaces/acme/quality").status_code == 401
    theirs = make_graph(bob.workspace, entities={"Module": "concept"}, title="Bob's")
    response = alice.client().get(f"/api/v1/workspaces/acme/quality?source={theirs.source.pk}")
    assert response.status_code == 404
    # And bob's report knows nothing of acme's graph.
    report = bob.client().get("/api/v1/workspaces/globex/quality").json()
    assert report["entities"] == 1
    assert [row["id"] for row in report["suspicious"]] == [theirs.entities["Module"].pk]


# --- The command -------------------------------------------------------------------------


def quality(*args: str) -> str:
    out = StringIO()
    call_command("quality", *args, stdout=out)
    return out.getvalue()


def test_the_command_prints_what_the_api_answers(alice, lab):
    api = alice.client().get("/api/v1/workspaces/acme/quality").json()
    assert json.loads(quality("--workspace", "acme", "--json")) == api
    source = lab.first.source.pk
    api = alice.client().get(f"/api/v1/workspaces/acme/quality?source={source}").json()
    assert json.loads(quality("--workspace", "acme", "--source", str(source), "--json")) == api

    text = quality("--workspace", "acme")
    assert "Quality of workspace acme" in text
    assert "Seen in 2+ chunks: 2 of 6 (33.3%)" in text
    assert "Singletons (one mention): 4 of 6 (66.7%)" in text
    assert "Orphans (no relation): 1 of 6 (16.7%)" in text
    assert "Typed relations (not related_to): 2 of 3 (66.7%)" in text
    assert "Boilerplate chunks skipped: 1 of 4 (25.0%)" in text
    module = lab.entity("Module")
    assert f"3  Module (concept, {module.pk}): {near_miss('Module')}" in text
    text = quality("--workspace", "acme", "--source", str(source))
    assert "Quality of source" in text and "(First notes)" in text
    assert "Engine" not in text


def test_the_command_refuses_unknown_workspaces_and_sources(alice, bob, lab):
    with pytest.raises(CommandError) as unknown:
        quality("--workspace", "nowhere")
    assert unknown.value.returncode == 2
    theirs = Source.objects.create(workspace=bob.workspace, kind="text", name="Bob's")
    with pytest.raises(CommandError) as other:
        quality("--workspace", "acme", "--source", str(theirs.pk))
    assert other.value.returncode == 2


# --- The page and its buttons -------------------------------------------------------------


def page(client: Client, **params: str):
    return client.get(reverse("explorer:quality"), {"ws": "acme", **params})


def button(action: str, entity: Entity) -> str:
    return f"{reverse(f'explorer:quality_{action}', args=[entity.pk])}?ws=acme"


def test_the_page_shows_the_figures_and_the_suspicious_names(editor, lab):
    response = page(signed_in(editor))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'aria-current="page">Quality' in html
    assert "Seen in 2+ chunks" in html and "Boilerplate skipped" in html
    for name in ("Module", "Widget", "Engine"):
        entity = lab.entity(name)
        assert f'id="suspicious-{entity.pk}"' in html
        assert button("delete", entity) in html
        assert button("block", entity) in html
    assert "Jonas Lindqvist</a>" not in html  # not suspicious
    assert "csrfmiddlewaretoken" in html

    source = page(signed_in(editor), source=str(lab.second.source.pk)).content.decode()
    assert "Quality of Second notes" in source
    assert f'id="suspicious-{lab.entity("Engine").pk}"' in source
    assert f'id="suspicious-{lab.entity("Module").pk}"' not in source
    assert f'<input type="hidden" name="source" value="{lab.second.source.pk}">' in source


def test_viewers_see_the_report_without_buttons(viewer, lab):
    html = page(signed_in(viewer)).content.decode()
    assert f'id="suspicious-{lab.entity("Module").pk}"' in html
    assert "quality/entities/" not in html


def test_the_workspace_and_source_pages_link_to_it(editor, lab):
    client = signed_in(editor)
    home = client.get(reverse("explorer:home"), {"ws": "acme"}).content.decode()
    assert f'href="{reverse("explorer:quality")}?ws=acme"' in home
    detail = client.get(
        reverse("explorer:source_detail", args=[lab.first.source.pk]), {"ws": "acme"}
    ).content.decode()
    assert (
        f'href="{reverse("explorer:quality")}?ws=acme&amp;source={lab.first.source.pk}"' in detail
    )


def test_delete_hides_the_entity_and_undo_restores_it(editor, lab):
    client = signed_in(editor)
    module = lab.entity("Module")
    response = client.post(button("delete", module), headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<tr id="suspicious-{module.pk}"' in html
    assert "Deleted &#x27;Module&#x27;" in html
    assert 'name="undo" value="restore"' in html
    module.refresh_from_db()
    assert module.state == EntityState.DELETED
    event = CurationEvent.objects.get(action=CurationAction.DELETE, entity=module)
    assert event.actor == editor.user
    # Gone from the report, and back after the undo.
    names = [
        row["name"]
        for row in editor.client().get("/api/v1/workspaces/acme/quality").json()["suspicious"]
    ]
    assert "Module" not in names

    response = client.post(button("undo", module), {"undo": "restore"}, headers=HTMX)
    assert response.status_code == 200
    assert "Restored &#x27;Module&#x27;" in response.content.decode()
    assert button("delete", module) in response.content.decode()
    module.refresh_from_db()
    assert module.state == EntityState.ACTIVE
    event.refresh_from_db()
    assert event.undone_by_id is not None


def test_block_deletes_and_blocks_the_name_in_every_type_and_undo_lifts_both(editor, alice, lab):
    client = signed_in(editor)
    widget = lab.entity("Widget")
    response = client.post(button("block", widget), {"source": lab.first.source.pk}, headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Deleted &#x27;Widget&#x27; and blocked the name in every type" in html
    assert 'name="undo" value="unblock"' in html
    widget.refresh_from_db()
    assert widget.state == EntityState.DELETED
    block = CurationEvent.objects.get(action=CurationAction.BLOCK)
    assert block.entity_id == widget.pk
    rules = CurationRule.objects.filter(event=block, kind=RuleKind.BLOCKED, active=True)
    assert rules.exists() and all(rule.entity_type_id is None for rule in rules)
    # Extraction can no longer make a "Widget" of any type.
    concept = EntityType.objects.get(workspace=alice.workspace, name="concept")
    assert resolve_entities(alice.workspace, [("Widget", concept)], create=True) == {}

    response = client.post(
        button("undo", widget),
        {"undo": "unblock", "event": block.pk, "source": lab.first.source.pk},
        headers=HTMX,
    )
    assert response.status_code == 200
    assert "unblocked its name" in response.content.decode()
    widget.refresh_from_db()
    assert widget.state == EntityState.ACTIVE
    assert not CurationRule.objects.filter(kind=RuleKind.BLOCKED, active=True).exists()
    block.refresh_from_db()
    assert block.undone_by_id is not None
    # The name resolves again: a "Widget" of the fallback type joins the restored entity.
    (made,) = resolve_entities(alice.workspace, [("Widget", concept)], create=True).values()
    assert made.pk == widget.pk
    # A second undo of the same block is refused, in the row.
    again = client.post(
        button("undo", widget), {"undo": "unblock", "event": block.pk}, headers=HTMX
    )
    assert again.status_code == 200
    assert "was undone already" in again.content.decode()


def test_buttons_need_an_editor_and_the_csrf_token(viewer, editor, lab):
    module = lab.entity("Module")
    assert signed_in(viewer).post(button("delete", module), headers=HTMX).status_code == 403
    assert signed_in(viewer).post(button("block", module), headers=HTMX).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(editor.user)
    assert strict.post(button("delete", module), headers=HTMX).status_code == 403
    assert Entity.objects.get(pk=module.pk).state == EntityState.ACTIVE
    # The page's token, sent as htmx sends it (X-CSRFToken from the cookie).
    page(strict)
    token = strict.cookies["csrftoken"].value
    response = strict.post(button("delete", module), headers={**HTMX, "X-CSRFToken": token})
    assert response.status_code == 200
    assert Entity.objects.get(pk=module.pk).state == EntityState.DELETED


def test_without_htmx_a_button_goes_back_to_the_page_with_the_message(editor, lab):
    client = signed_in(editor)
    widget = lab.entity("Widget")
    source = lab.first.source.pk
    response = client.post(button("delete", widget), {"source": source}, follow=True)
    assert (
        response.redirect_chain[-1][0] == f"{reverse('explorer:quality')}?ws=acme&source={source}"
    )
    assert "Deleted &#x27;Widget&#x27;" in response.content.decode()


def test_buttons_on_another_workspaces_entity_find_nothing(editor, bob, lab):
    theirs = make_graph(bob.workspace, entities={"Module": "concept"}, title="Bob's")
    entity = theirs.entities["Module"]
    response = signed_in(editor).post(button("delete", entity), headers=HTMX)
    assert response.status_code == 404
    assert Entity.objects.get(pk=entity.pk).state == EntityState.ACTIVE
