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


def test_passages_read_without_the_markdown_marks_of_their_document(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    ingest_into(
        ada.workspace,
        "## Cranes\n\nThe **harbour crane** uses `winch.pull()` daily.\n\n```\n# crane code\n```\n",
        title="manual",
    )
    html = signed_in(ada).get("/ask/", {"q": "harbour crane winch"}).content.decode()
    passage = html[html.index('class="passage-text"') :]
    passage = passage[: passage.index("</div>")]
    assert "<mark>harbour</mark> <mark>crane</mark> uses <mark>winch</mark>.pull() daily" in passage
    assert passage.startswith('class="passage-text"><p>Cranes\n')
    assert "*" not in passage and "`" not in passage
    # Code keeps its lines ("# ..." is a comment there), set apart.
    assert '<pre class="passage-code"><code># <mark>crane</mark> code</code></pre>' in passage
    assert passage.count("#") == 1


def test_a_passage_starting_inside_a_long_example_shows_it_as_code(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    lines = [
        f"loan_{i} = amortize({i}, rate=0.05)  # payment {i} of the harbour" for i in range(60)
    ]
    ingest_into(
        ada.workspace,
        "# Recipes\n\nThe recipe sums the loans.\n\n```\n"
        + "\n".join(lines)
        + "\n# zeppelin hangar fees come last\nfees = hangar()\n```\n\nThat is all.",
        title="recipes",
    )
    html = signed_in(ada).get("/ask/", {"q": "zeppelin hangar fees"}).content.decode()
    passage = html[html.index('class="passage-text"') :]
    passage = passage[: passage.index("</div>")]
    # Its fence is in the chunk before: the example is still code, comments and all.
    assert passage.startswith('class="passage-text"><pre class="passage-code"><code>')
    assert "# <mark>zeppelin</mark> <mark>hangar</mark> <mark>fees</mark> come last" in passage
    assert "<p>That is all.</p>" in passage


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


def test_the_form_offers_the_workspace_s_sources_and_types_and_keeps_the_url_s_filters(
    make_member,
):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    bob = make_member("bob", workspace="other", role=Role.VIEWER)
    log = ingest_into(ada.workspace, "The harbour crane was repaired by Marta Olsen.", title="log")
    secret = ingest_into(bob.workspace, "Nothing here.", title="bob's secret source")

    html = (
        signed_in(ada)
        .get(
            "/ask/",
            {
                "q": "harbour crane",
                "sources": f"{log.pk},{secret.pk},999999",
                "types": "person,no_such_type",
                "from": "2000-01-01",
                "to": "not-a-date",
                "mode": "global",
            },
        )
        .content.decode()
    )
    assert f'<option value="{log.pk}" selected>log</option>' in html
    assert "bob&#x27;s secret source" not in html and f'value="{secret.pk}"' not in html
    assert '<option value="person" selected>person</option>' in html
    assert "no_such_type" not in html
    assert 'name="from" value="2000-01-01"' in html
    assert 'name="to" value=""' in html
    assert 'name="mode" value="global" checked' in html
    assert "Marta Olsen" in html


def test_the_sources_filter_keeps_only_passages_of_the_chosen_sources(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    crane = ingest_into(ada.workspace, "The harbour crane was repaired by Marta Olsen.", title="a")
    ingest_into(ada.workspace, "The harbour crane was painted by Ivo Lund.", title="b")
    client = signed_in(ada)

    both = client.get("/ask/", {"q": "harbour crane"}).content.decode()
    assert "Marta Olsen" in both and "Ivo Lund" in both
    # repeated, as the multi-select submits it, or comma-separated, as shared URLs carry it
    for query in (f"sources={crane.pk}", f"sources={crane.pk}&sources=", f"sources={crane.pk},"):
        one = client.get(f"/ask/?q=harbour+crane&{query}").content.decode()
        assert "Marta Olsen" in one and "Ivo Lund" not in one


def test_another_workspace_s_source_is_no_filter(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    bob = make_member("bob", workspace="other", role=Role.VIEWER)
    ingest_into(ada.workspace, "The harbour crane was repaired by Marta Olsen.", title="log")
    theirs = ingest_into(bob.workspace, "The harbour crane of workspace other.", title="theirs")

    html = (
        signed_in(ada).get("/ask/", {"q": "harbour crane", "sources": theirs.pk}).content.decode()
    )
    assert "Marta Olsen" in html  # the foreign id was dropped, not applied
    assert "workspace other" not in html


def test_with_an_llm_the_page_hands_the_question_and_filters_to_the_answer_script(
    make_member, settings
):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    log = ingest_into(ada.workspace, "The harbour crane was repaired by Marta Olsen.", title="log")
    # Configured after the ingest, which would otherwise spend seconds retrying this address.
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"  # never called by the page itself
    settings.LLM_MODEL = "scripted-model"
    question = 'crane "<script>x</script>'

    html = (
        signed_in(ada)
        .get("/ask/", {"q": question, "sources": log.pk, "types": "person", "mode": "global"})
        .content.decode()
    )
    assert 'id="ask-answer"' in html
    assert 'data-url="/api/v1/workspaces/lab/ask"' in html
    assert 'data-question="crane &quot;&lt;script&gt;x&lt;/script&gt;"' in html
    assert 'data-mode="global"' in html
    assert f'data-sources="[{log.pk}]"' in html
    assert 'data-types="[&quot;person&quot;]"' in html
    assert "js/ask/main.js" in html
    assert "Answers need an LLM" not in html


def test_without_an_llm_there_is_no_answer_box(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    html = signed_in(ada).get("/ask/", {"q": "anything"}).content.decode()
    assert 'id="ask-answer"' not in html
    assert "Answers need an LLM" in html


def test_entity_chips_load_their_panel_in_the_page_and_keep_their_href(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    ingest_into(
        ada.workspace, "Marta Olsen repaired the crane in Bergen for Nordic Cranes AS.", title="log"
    )
    html = signed_in(ada).get("/ask/", {"q": "Marta Olsen Bergen"}).content.decode()
    chip = html[html.index('class="chip"') :].split(">", 1)[0]
    assert 'href="/panels/entity/' in chip and 'hx-get="/panels/entity/' in chip
    assert 'hx-target="#panel"' in chip
    assert '<aside id="panel"' in html


def test_the_ask_panel_answers_the_explorer_box_with_a_fragment(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    bob = make_member("bob", workspace="other", role=Role.VIEWER)
    ingest_into(
        ada.workspace, f"Marta Olsen repaired the harbour crane in Bergen. {HOSTILE}", title="log"
    )
    ingest_into(bob.workspace, "The harbour crane secret of workspace other.", title="secret")

    response = signed_in(ada).get(
        "/ask/panel/", {"ws": "lab", "q": "harbour crane Bergen"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and 'id="panel-title"' in html
    assert "<mark>crane</mark>" in html
    assert HOSTILE not in html and "&lt;img src=x onerror=" in html
    assert 'href="/ask/?ws=lab&amp;q=harbour+crane+Bergen"' in html
    assert "/documents/" in html and "start=" in html
    assert "workspace other" not in html


def test_the_ask_panel_opened_without_htmx_is_the_ask_page(make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    response = signed_in(ada).get("/ask/panel/", {"ws": "lab", "q": "crane"})
    assert response.status_code == 302
    assert response["Location"] == "/ask/?ws=lab&q=crane"
