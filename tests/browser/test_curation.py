"""Curation in a real browser: viewers get no curation controls (and no Review link),
editors merge from the entity panel with the typeahead and undo it, and accept a merge
suggestion on the review page. The `page` fixture fails a test on any script error or
CSP violation, so the htmx controls must work under the real policy."""

from __future__ import annotations

import re

from django.urls import reverse
from playwright.sync_api import expect

from knowledge.models import Entity, MergeSuggestion
from tests.browser.conftest import screenshot
from tests.knowledge.graph_data import make_graph
from workspaces.models import Role


def graph(workspace) -> dict[str, Entity]:
    return make_graph(
        workspace,
        entities={"Google": "organization", "Alphabet": "organization", "Larry Page": "person"},
        relations=[("Larry Page", "Google", "founded"), ("Google", "Alphabet", "part_of")],
    ).entities


def panel_url(entity: Entity) -> str:
    return reverse("explorer:entity_panel", args=[entity.pk])


def test_a_viewer_sees_no_curation_controls_and_no_review_link(page, sign_in, make_member):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    viewer = make_member("vic", workspace="acme", role=Role.VIEWER)
    google = graph(editor.workspace)["Google"]

    sign_in(viewer)
    page.goto(panel_url(google))
    expect(page.get_by_role("heading", name="Google", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Explore")).to_be_visible()
    expect(page.get_by_role("link", name="Review")).to_have_count(0)
    expect(page.get_by_role("heading", name="Curate")).to_have_count(0)
    expect(page.locator("#curation-controls")).to_have_count(0)
    expect(page.get_by_role("button", name="Rename")).to_have_count(0)

    # The same panel for an editor carries the controls (loaded by htmx).
    sign_in(editor)
    page.goto(panel_url(google))
    expect(page.get_by_role("heading", name="Curate")).to_be_visible()
    expect(page.get_by_role("link", name="Review")).to_be_visible()


def test_an_editor_merges_from_the_panel_with_the_typeahead_and_undoes_it(
    page, sign_in, make_member
):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    entities = graph(editor.workspace)
    google, alphabet = entities["Google"], entities["Alphabet"]
    sign_in(editor)
    page.goto(panel_url(google))

    page.get_by_text("Merge with another entity").click()
    page.get_by_label("Find the other entity").fill("alph")
    page.get_by_role("radio", name=re.compile("^Alphabet")).check()
    page.get_by_role("button", name="Merge", exact=True).click()
    outcome = page.locator(".curation-outcome")
    expect(outcome).to_contain_text("Merged 'Alphabet' into 'Google'")
    assert Entity.objects.get(pk=alphabet.pk).state == "merged"

    outcome.get_by_role("button", name="Undo merge").click()
    expect(page.locator(".curation-outcome")).to_contain_text("Undid merge")
    assert Entity.objects.get(pk=alphabet.pk).state == "active"

    # An error is shown next to its control, and nothing changes.
    page.get_by_text("Rename", exact=True).first.click()
    page.get_by_label("New name").fill("   ")
    page.get_by_role("button", name="Rename", exact=True).click()
    expect(page.locator("#curation-error-rename")).to_have_text("An entity needs a name.")
    assert Entity.objects.get(pk=google.pk).name == "Google"
    # Last: Playwright's screenshot leaves style="" on inputs, which htmx's attribute
    # settling would copy onto the next swapped-in inputs (a CSP violation).
    screenshot(page, "curation-panel")


def test_an_editor_accepts_a_merge_suggestion_on_the_review_page(page, sign_in, make_member):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    entities = graph(editor.workspace)
    google, alphabet = entities["Google"], entities["Alphabet"]
    low, high = sorted([google.pk, alphabet.pk])
    suggestion = MergeSuggestion.objects.create(
        workspace=editor.workspace, entity_a_id=low, entity_b_id=high, score=0.82,
        reasons=["token-set 0.82"],
    )  # fmt: skip
    sign_in(editor)
    page.goto(reverse("explorer:review"))
    card = page.locator(f"#suggestion-{suggestion.pk}")
    expect(card.get_by_role("heading", name=re.compile("^Google"))).to_be_visible()
    expect(card.get_by_role("heading", name=re.compile("^Alphabet"))).to_be_visible()
    expect(card.locator("mark").first).to_be_visible()
    expect(card).to_contain_text("token-set 0.82")
    screenshot(page, "review")

    card.get_by_role("radio", name="Alphabet").check()
    card.get_by_role("button", name="Accept").click()
    expect(page.locator(f"#suggestion-{suggestion.pk}")).to_contain_text(
        "Merged 'Google' into 'Alphabet'"
    )
    assert Entity.objects.get(pk=google.pk).merged_into_id == alphabet.pk
    suggestion.refresh_from_db()
    assert suggestion.status == "accepted"
    expect(page.get_by_role("button", name="Undo merge")).to_be_visible()
