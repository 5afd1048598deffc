"""Account screens in a real browser: an API token is shown once, copied and revoked; the
sign-in form starts focused and explains a failed attempt."""

from __future__ import annotations

import re

from django.test import Client
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from workspaces.models import Role


def test_a_new_token_is_shown_once_can_be_copied_and_is_revoked(
    page, context, sign_in, make_member
):
    ada = make_member("ada", workspace="lab", role=Role.EDITOR)
    sign_in(ada)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/account/tokens/")
    page.get_by_label("Token name").fill("research-agent")
    page.get_by_role("button", name="Create token").click()

    secret = page.get_by_label("Your new token")
    expect(secret).to_have_value(re.compile(r"^glm_[0-9a-f]{12}_\S+$"))
    expect(secret).to_be_focused()
    plaintext = secret.input_value()
    expect(page.get_by_text("it will not be shown again")).to_be_visible()
    page.get_by_role("button", name="Copy").click()
    status = page.get_by_role("status").filter(has_text=re.compile("Copied|Selected"))
    expect(status).to_be_visible()
    if "Copied" in status.inner_text():
        assert page.evaluate("navigator.clipboard.readText()") == plaintext
    screenshot(page, "tokens")

    page.goto("/account/tokens/")
    expect(page.get_by_role("cell", name="research-agent", exact=True)).to_be_visible()
    expect(page.get_by_label("Your new token")).to_have_count(0)
    assert plaintext not in page.content()

    page.get_by_role("link", name="Revoke token research-agent").click()
    page.get_by_role("button", name="Revoke token").click()
    expect(page.get_by_text("“research-agent” is revoked")).to_be_visible()
    row = page.get_by_role("row").filter(has_text="research-agent")
    expect(row).to_contain_text("Revoked")
    expect(row.get_by_role("link", name=re.compile("Revoke"))).to_have_count(0)
    bearer = Client(headers={"Authorization": f"Bearer {plaintext}"})
    assert bearer.get("/api/v1/me").status_code == 401


def test_the_sign_in_form_starts_focused_and_explains_a_failure(page, make_member):
    make_member("ada", workspace="lab")
    page.goto("/login/")
    expect(page.get_by_label("Username")).to_be_focused()
    screenshot(page, "login")
    page.keyboard.type("ada")
    page.keyboard.press("Tab")
    page.keyboard.type("not the password")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("Please enter a correct username")
    expect(page.get_by_label("Username")).to_have_value("ada")
