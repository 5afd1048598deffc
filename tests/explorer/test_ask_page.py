"""The Ask page: passages for the question in its URL, highlighted and escaped, linked to
their span, and never another workspace's."""

from __future__ import annotations

import pytest

from ingest.actions.sources import do_create_text_source, validate_source_options
from tests.support import run_pending, signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HOSTILE = '<img src=x onerror="alert(1)">'


def ingest_into(workspace, text: str, *, title: str):
    source, _ = do_create_text_source(
        workspace=workspace, title=title, text=text, options=validate_source_options()
    )
    run_pending(source)
    return source


def test_the_ask_page_without_a_question_shows_the_box(make_member):
    member = make_member("ada", workspace="lab", role=Role.VIEWER)
    response = signed_in(member).get("/ask/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="q"' in html
    assert 'aria-current="page">Ask' in html


def test_the_ask_page_ranks_highlighted_escaped_passages_of_this_workspace_only(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    bob = make_member("bob", workspace="other", role=Role.VIEWER)
    ingest_into(
        ada.workspace,
        f"The harbour crane was repaired by Marta Olsen in March. {HOSTILE}",
        title="crane log",
    )
    ingest_into(
        bob.workspace, "The harbour crane secret belongs to workspace other.", title="secret"
    )

    html = signed_in(ada).get("/ask/", {"q": "who repaired the harbour crane?"}).content.decode()
    assert "Marta Olsen" in html
    assert "<mark>The</mark>" not in html
    assert "<mark>crane</mark>" in html
    assert "<mark>repaired</mark>" in html
    assert HOSTILE not in html
    assert "&lt;img src=x onerror=" in html
    assert "/documents/" in html and "start=" in html
    assert "Answers need an LLM" in html
    assert "secret" not in html

    other = signed_in(bob).get("/ask/", {"q": "harbour crane"}).content.decode()
    assert "Marta Olsen" not in other
    assert "workspace other" in other


def test_the_date_range_keeps_only_documents_ingested_within_it(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    ingest_into(ada.workspace, "The harbour crane was repaired by Marta Olsen.", title="log")
    client = signed_in(ada)
    query = {"q": "harbour crane"}
    today = client.get("/ask/", {**query, "from": "2000-01-01"}).content.decode()
    assert "Marta Olsen" in today
    past = client.get("/ask/", {**query, "to": "2000-01-01"}).content.decode()
    assert "Marta Olsen" not in past
    assert "No passages match" in past
