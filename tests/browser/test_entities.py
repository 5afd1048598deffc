"""The Entities page in a real browser, under the real Content-Security-Policy (the `page`
fixture fails on any script error or violation): an editor merges two entities into the
one chosen to keep, sees the outcome and the merged row gone, and undoes it; a name opens
the entity panel beside the table, and a change made there reloads the table; a viewer
sorts the table and gets no controls."""

from __future__ import annotations

from django.urls import reverse
from playwright.sync_api import expect

from knowledge.models import CurationAction, CurationEvent, Entity, EntityState
from tests.browser.conftest import screenshot
from tests.knowledge.graph_data import make_graph, make_lab_graph
from workspaces.models import Role


def test_an_editor_merges_two_entities_into_the_chosen_one_and_undoes_it(
    page, sign_in, make_member
):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    make_lab_graph(editor.workspace)
    built = make_graph(editor.workspace, entities={"Ada Lovelace": "person"}, title="More")
    ada = Entity.objects.get(workspace=editor.workspace, name="Ada")
    lovelace = built.entities["Ada Lovelace"]
    sign_in(editor)
    page.goto(f"{reverse('explorer:entities')}?ws=acme")
    expect(page.get_by_role("heading", name="Entities of Acme")).to_be_visible()
    expect(page.get_by_role("link", name="Entities", exact=True)).to_have_attribute(
        "aria-current", "page"
    )
    expect(page.locator("#entities-results")).to_contain_text("5 entities")

    page.get_by_role("checkbox", name="Select Ada", exact=True).check()
    page.get_by_role("checkbox", name="Select Ada Lovelace").check()
    page.get_by_role("radio", name="Keep Ada Lovelace when merging").check()
    page.get_by_role("button", name="Merge").click()
    outcome = page.get_by_role("status").filter(has_text="Merged")
    expect(outcome).to_have_text("Merged 'Ada' into 'Ada Lovelace'")
    expect(page.locator(f"#entity-{ada.pk}")).to_have_count(0)
    expect(page.locator(f"#entity-{lovelace.pk}")).to_be_visible()
    expect(page.locator("#entities-results")).to_contain_text("4 entities")
    assert Entity.objects.get(pk=ada.pk).state == EntityState.MERGED
    assert Entity.objects.get(pk=ada.pk).merged_into_id == lovelace.pk
    screenshot(page, "entities-merged")

    page.get_by_role("button", name="Undo").click()
    expect(page.locator("#entities-results")).to_contain_text("Undid merge")
    expect(page.locator(f"#entity-{ada.pk}")).to_be_visible()
    assert Entity.objects.get(pk=ada.pk).state == EntityState.ACTIVE
    assert CurationEvent.objects.get(action=CurationAction.MERGE).undone_by_id is not None

    # A name opens its panel beside the table.
    page.locator(f"#entity-{lovelace.pk}").get_by_role(
        "link", name="Ada Lovelace", exact=True
    ).click()
    expect(page.locator("#panel").get_by_role("heading", name="Ada Lovelace")).to_be_visible()
    panel = page.locator("#panel")
    expect(panel.get_by_role("region", name="Curate")).to_be_visible()
    screenshot(page, "entities-panel")
    # A change made in the panel reloads the table.
    panel.get_by_text("Change type", exact=True).first.click()
    panel.get_by_label("Type", exact=True).select_option("organization")
    panel.get_by_role("button", name="Change type", exact=True).click()
    expect(page.locator(f"#entity-{lovelace.pk}")).to_contain_text("organization")


def test_a_viewer_sorts_the_table_without_controls(page, sign_in, make_member):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    viewer = make_member("vic", workspace="acme", role=Role.VIEWER)
    make_lab_graph(editor.workspace)
    sign_in(viewer)
    page.goto(f"{reverse('explorer:entities')}?ws=acme")
    page.get_by_role("link", name="Degree").click()
    expect(page.get_by_role("columnheader", name="Degree ▼")).to_have_attribute(
        "aria-sort", "descending"
    )
    first = page.locator("tbody tr").first
    expect(first).to_contain_text("Acme")  # degree 2
    expect(page.get_by_role("checkbox")).to_have_count(0)
    expect(page.get_by_role("button", name="Merge")).to_have_count(0)
    screenshot(page, "entities-viewer")
