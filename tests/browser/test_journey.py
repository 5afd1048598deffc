"""The whole journey of a newcomer, in one browser session with a real worker: upload a
file, watch it reach done, find its entities in the graph, read the evidence behind one,
merge two entities and undo the merge. Each screen has its own detailed tests; this one
proves they hand over to each other."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from knowledge.models import Entity, EntityState
from tests.browser.conftest import screenshot
from workspaces.models import Role

PROCESSING = 180_000  # bounds a hung worker; nothing asserts on how long it took

STORY = """# Harbour Town

Ada Lovelace met Charles Babbage at the Harbour Town lighthouse.
Charles Babbage showed Ada Lovelace the engine drawings.
"""


@pytest.mark.slow(reason="the whole journey in Chromium")
def test_upload_explore_read_evidence_merge_and_undo(page, sign_in, make_member, worker, tmp_path):
    editor = make_member("erin", workspace="lab", role=Role.EDITOR)
    sign_in(editor)
    story = tmp_path / "harbour.md"
    story.write_text(STORY)

    page.goto("/")
    page.locator("#upload-files").set_input_files(str(story))
    page.get_by_role("button", name="Upload").click()
    row = page.locator("#source-list tbody tr").first
    expect(row.locator("[data-status]")).to_have_text("Done", timeout=PROCESSING)

    page.get_by_role("link", name="Explore").click()
    expect(page.locator("#explorer")).to_have_attribute("data-ready", "true")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    page.locator("#node-list summary").click()
    ada = Entity.objects.get(workspace=editor.workspace, name="Ada Lovelace")
    babbage = Entity.objects.get(workspace=editor.workspace, name="Charles Babbage")
    nodes = page.locator("#node-list-items")
    expect(nodes.locator(f'button[data-id="{ada.pk}"]')).to_be_visible()
    expect(nodes.locator(f'button[data-id="{babbage.pk}"]')).to_be_visible()

    nodes.locator(f'button[data-id="{ada.pk}"]').click()
    panel = page.locator("#panel")
    expect(page.locator("#panel-title")).to_have_text("Ada Lovelace")
    expect(panel.locator("mark").first).to_have_text("Ada Lovelace")
    document_link = panel.locator('a[href^="/documents/"]').first
    expect(document_link).to_have_text("Harbour Town")  # the document's title
    expect(document_link).to_have_attribute(
        "href", re.compile(r"^/documents/\d+/\?start=\d+&end=\d+")
    )
    screenshot(page, "journey-evidence")

    panel.get_by_text("Merge with another entity").click()
    panel.get_by_label("Find the other entity").fill("Charles")
    panel.get_by_role("radio", name=re.compile("^Charles Babbage")).check()
    panel.get_by_role("button", name="Merge", exact=True).click()
    expect(panel.locator(".curation-outcome")).to_contain_text(
        "Merged 'Charles Babbage' into 'Ada Lovelace'"
    )
    assert Entity.objects.get(pk=babbage.pk).state == EntityState.MERGED
    # The graph dropped the merged node.
    expect(nodes.locator(f'button[data-id="{babbage.pk}"]')).to_have_count(0)

    panel.locator(".curation-outcome").get_by_role("button", name="Undo merge").click()
    expect(panel.locator(".curation-outcome")).to_contain_text("Undid merge")
    assert Entity.objects.get(pk=babbage.pk).state == EntityState.ACTIVE
    assert Entity.objects.get(pk=ada.pk).state == EntityState.ACTIVE
    # ...and brought it back with the neighbourhood it refreshed.
    expect(nodes.locator(f'button[data-id="{babbage.pk}"]')).to_be_visible()
