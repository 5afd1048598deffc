"""The quality page in a real browser: an editor deletes a suspicious name and undoes it,
blocks another and undoes that, each answered in its row by htmx under the real
Content-Security-Policy (the `page` fixture fails on any script error or violation); a
viewer sees the report without buttons."""

from __future__ import annotations

from django.urls import reverse
from playwright.sync_api import expect

from knowledge.models import Entity, EntityState
from tests.browser.conftest import screenshot
from tests.knowledge.test_quality import build_lab
from workspaces.models import Role


def test_an_editor_deletes_and_blocks_suspicious_names_and_undoes_both(page, sign_in, make_member):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    lab = build_lab(editor.workspace)
    module, widget = lab.entity("Module"), lab.entity("Widget")
    sign_in(editor)
    page.goto(f"{reverse('explorer:quality')}?ws=acme")
    expect(page.get_by_role("heading", name="Quality of Acme")).to_be_visible()
    expect(page.get_by_role("link", name="Quality", exact=True)).to_have_attribute(
        "aria-current", "page"
    )
    screenshot(page, "quality-workspace")

    row = page.locator(f"#suspicious-{module.pk}")
    row.get_by_role("button", name="Delete Module").click()
    expect(row).to_contain_text("Deleted 'Module'")
    assert Entity.objects.get(pk=module.pk).state == EntityState.DELETED
    row.get_by_role("button", name="Undo").click()
    expect(row).to_contain_text("Restored 'Module'")
    assert Entity.objects.get(pk=module.pk).state == EntityState.ACTIVE

    row = page.locator(f"#suspicious-{widget.pk}")
    row.get_by_role("button", name="Block the name Widget").click()
    expect(row).to_contain_text("Deleted 'Widget' and blocked the name in every type")
    assert Entity.objects.get(pk=widget.pk).state == EntityState.DELETED
    screenshot(page, "quality-blocked")
    row.get_by_role("button", name="Undo").click()
    expect(row).to_contain_text("unblocked its name")
    assert Entity.objects.get(pk=widget.pk).state == EntityState.ACTIVE


def test_a_viewer_reads_a_source_report_without_buttons(page, sign_in, make_member):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    viewer = make_member("vic", workspace="acme", role=Role.VIEWER)
    lab = build_lab(editor.workspace)
    sign_in(viewer)
    page.goto(f"{reverse('explorer:source_detail', args=[lab.first.source.pk])}?ws=acme")
    page.get_by_role("link", name="Quality report").click()
    expect(page.get_by_role("heading", name="Quality of First notes")).to_be_visible()
    expect(page.locator(f"#suspicious-{lab.entity('Module').pk}")).to_be_visible()
    expect(page.get_by_role("button", name="Delete Module")).to_have_count(0)
    screenshot(page, "quality-source-viewer")
