"""Relation curation in a real browser: an editor retypes a relation from its panel and
undoes it, and adds a relation from an entity's panel with the typeahead; a viewer sees no
controls. The `page` fixture fails a test on any script error or CSP violation."""

from __future__ import annotations

import re

from django.urls import reverse
from playwright.sync_api import expect

from knowledge.models import Relation
from tests.knowledge.graph_data import make_graph
from workspaces.models import Role


def test_an_editor_retypes_a_relation_undoes_it_and_adds_one(page, sign_in, make_member):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    viewer = make_member("vic", workspace="acme", role=Role.VIEWER)
    entities = make_graph(
        editor.workspace,
        entities={"Google": "organization", "Alphabet": "organization", "Larry Page": "person"},
        relations=[("Larry Page", "Google", "works_for")],
    ).entities
    relation = Relation.objects.get()
    relation_panel = reverse("explorer:relation_panel", args=[relation.pk])

    sign_in(viewer)
    page.goto(relation_panel)
    expect(page.locator("[data-panel-relation]")).to_be_visible()
    expect(page.get_by_role("heading", name="Curate")).to_have_count(0)

    sign_in(editor)
    page.goto(relation_panel)
    page.get_by_text("Change type").first.click()
    page.get_by_label("Relation type").select_option("related_to")
    page.get_by_role("button", name="Change type").click()
    outcome = page.locator(".curation-outcome")
    expect(outcome).to_contain_text("from works_for to related_to")
    assert Relation.objects.get(pk=relation.pk).type.name == "related_to"
    outcome.get_by_role("button", name="Undo").click()
    expect(page.locator(".curation-outcome")).to_contain_text("Undid")
    assert Relation.objects.get(pk=relation.pk).type.name == "works_for"

    page.goto(reverse("explorer:entity_panel", args=[entities["Google"].pk]))
    page.get_by_text("Add a relation").click()
    page.get_by_label("Find the entity at the other end").fill("alph")
    page.get_by_role("radio", name=re.compile("^Alphabet")).check()
    page.get_by_label("Relation type").select_option("part_of")
    page.get_by_label("Why (kept with the relation)").fill("Its parent company.")
    page.get_by_role("button", name="Add relation").click()
    expect(page.locator(".curation-outcome")).to_contain_text("Added the relation")
    added = Relation.objects.get(type__name="part_of")
    assert (added.source_id, added.target_id) == (entities["Google"].pk, entities["Alphabet"].pk)
