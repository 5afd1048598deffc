"""The layout every screen shares: signing in, the workspace switcher, and that pages load
under the Content-Security-Policy without a script error (checked by the `page` fixture)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from workspaces.actions.workspaces import do_set_membership
from workspaces.models import Role


def test_signing_in_through_the_form_opens_the_sources_page(page, make_member):
    make_member("ada", workspace="lab")
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/$"))
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("not-used-here-1")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("link", name="Sources")).to_be_visible()
    screenshot(page, "sources-after-sign-in")


def test_the_switcher_changes_the_current_workspace(page, sign_in, make_member):
    ada = make_member("ada", workspace="lab")
    zoo = make_member("zed", workspace="zoo").workspace
    do_set_membership(workspace=zoo, username="ada", role=Role.VIEWER)
    sign_in(ada)
    page.goto("/")
    switch = page.get_by_label("Workspace", exact=True)
    expect(switch).to_have_value("lab")
    switch.select_option("zoo")
    page.get_by_role("button", name="Switch").click()
    expect(page.get_by_label("Workspace", exact=True)).to_have_value("zoo")
    page.goto("/explore/")
    expect(page.get_by_label("Workspace", exact=True)).to_have_value("zoo")
