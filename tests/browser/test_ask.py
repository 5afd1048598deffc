"""The Ask page in the real browser: question → highlighted passages (hostile text inert)
→ "show in graph" loads the entities in the explorer → the evidence span opens; with a
scripted LLM, the answer streams in, its citations become links that lead to their
passage and its span, hostile answers stay inert, and a spent budget says so. The filters
live in the URL, chips open their panels in the page, and the explorer's Ask box answers
in its side panel."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from ingest.actions.sources import do_create_text_source, validate_source_options
from knowledge.extraction.extractors import reset_extractor
from knowledge.models import LlmCall
from tests.browser.conftest import screenshot
from tests.knowledge.ask.conftest import passages_in
from tests.llm_server import Reply, ScriptedLLM
from tests.support import run_pending
from workspaces.models import Role

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=2</script>"
TEXT = (
    "Marta Olsen repaired the harbour crane in Bergen for Nordic Cranes AS. "
    f"The repair log says {IMG} and {SCRIPT}."
)
WEATHER = "Fog closed the northern channel for three days while ships waited at the buoy."
QUESTION = "Who repaired the harbour crane?"


@pytest.fixture
def crane(make_member, sign_in):
    viewer = make_member("vera", workspace="lab", role=Role.VIEWER)
    source, _ = do_create_text_source(
        workspace=viewer.workspace, title="crane", text=TEXT, options=validate_source_options()
    )
    run_pending(source)
    sign_in(viewer)
    return viewer


@pytest.fixture
def llm(crane, settings) -> Iterator[ScriptedLLM]:
    """A scripted model for answers, configured after the corpus was ingested offline."""
    with ScriptedLLM() as server:
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_MODEL = "scripted-model"
        settings.LLM_RETRY_BASE_DELAY = 0.01
        settings.LLM_RETRY_MAX_DELAY = 0.05
        settings.LLM_TIMEOUT = 10.0
        reset_extractor()
        yield server
    reset_extractor()


def answering(template: str, *, piece_delay: float = 0.0):
    """A model that writes `template` with {n} the number of the passage naming Marta."""

    def respond(body: dict[str, Any]) -> Reply:
        numbers = [n for n, text in passages_in(body).items() if "Marta Olsen" in text]
        return Reply(content=template.format(n=numbers[0]), piece_delay=piece_delay)

    return respond


def assert_inert(page: Page) -> None:
    assert page.evaluate("window.__pwned") is None
    assert page.locator("body img[src='x']").count() == 0


def test_a_question_shows_passages_then_the_graph_then_the_evidence_span(page, crane):
    page.goto("/explore/")
    page.fill("#graph-ask", QUESTION)
    page.click("form[action='/ask/'] button")
    page.click("#panel a.ask-full")  # the Ask box answers in the panel; the full page is a link
    expect(page.locator(".passage").first).to_contain_text("Marta Olsen")
    expect(page.locator(".passage mark").first).to_be_visible()
    expect(page.locator(".passage").first).to_contain_text(IMG)
    assert "q=Who+repaired" in page.url
    assert_inert(page)
    screenshot(page, "ask-passages")

    page.click("a.show-in-graph")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    assert "seeds=" in page.url
    assert_inert(page)

    page.go_back()
    page.click(".passage a.evidence")
    expect(page.locator("main")).to_contain_text("Marta Olsen")
    assert "start=" in page.url
    assert_inert(page)


def test_the_answer_streams_in_and_its_citations_lead_to_the_passage_and_its_span(page, crane, llm):
    llm.responder = answering(
        "Marta Olsen repaired the harbour crane in Bergen [{n}]. She did it for **Nordic "
        "Cranes AS** [{n}].",
        piece_delay=0.2,
    )
    page.goto(f"/ask/?q={QUESTION}")
    stream = page.locator("#ask-answer .answer-stream")
    expect(stream).to_contain_text("Marta Olsen")  # words arrive before the answer is done
    assert page.locator("#ask-answer").get_attribute("data-state") != "done"
    expect(stream.locator("a.cite").first).to_have_text("[1]")  # linked as its citation came
    expect(page.locator("#ask-answer")).to_have_attribute("data-state", "done")
    answer = page.locator("#ask-answer .answer-text")
    expect(answer.locator("strong")).to_have_text("Nordic Cranes AS")
    expect(page.locator("#ask-answer .answer-status")).to_contain_text("citing 1")
    screenshot(page, "ask-streamed-answer")

    answer.locator("a.cite").first.click()
    target = page.locator(".passage.is-target")
    expect(target).to_have_count(1)
    expect(target).to_contain_text("Marta Olsen")
    expect(target).to_be_focused()
    expect(target.locator("a.cited-span")).to_be_visible()
    target.locator("a.evidence").click()
    expect(page.locator("main")).to_contain_text("Marta Olsen")
    assert "start=" in page.url and "end=" in page.url
    assert_inert(page)


def weather_source(workspace) -> Any:
    source, _ = do_create_text_source(
        workspace=workspace, title="weather", text=WEATHER, options=validate_source_options()
    )
    run_pending(source)
    return source


def test_a_cited_passage_the_page_does_not_list_is_added_from_the_answer(page, crane, llm):
    """The page and the answer retrieve separately; when the answer cites a passage the
    page does not list (here: the page is narrowed to the weather source and the answer's
    request is not), the passage is added from the answer's stream."""
    weather = weather_source(crane.workspace)
    llm.responder = answering("Marta Olsen repaired it [{n}].")

    def widen(route: Any) -> None:
        body = json.loads(route.request.post_data or "{}")
        body.pop("sources", None)
        route.continue_(post_data=json.dumps(body))

    page.route("**/api/v1/workspaces/*/ask", widen)
    page.goto(f"/ask/?q={QUESTION}&sources={weather.pk}")
    expect(page.locator("#ask-answer")).to_have_attribute("data-state", "done")
    assert "Marta Olsen" not in page.locator(".passage:not(.from-answer)").all_inner_texts()[0]
    page.locator("#ask-answer a.cite").click()
    added = page.locator(".passage.from-answer.is-target")
    expect(added).to_contain_text(IMG)  # the passage's text, as text
    # The listed passage took the answer's number: no number names two passages.
    headings = page.locator(".passages article.passage h3").all_inner_texts()
    numbers = [h.split("]")[0] + "]" for h in headings if not h.startswith("[\u2013]")]
    assert len(numbers) == len(set(numbers)), headings
    added.locator("a.evidence").click()
    expect(page.locator("main")).to_contain_text("Marta Olsen")
    assert "start=" in page.url
    assert_inert(page)


def test_a_passage_added_from_the_answer_reads_as_the_listed_ones_do(page, crane, llm):
    """The added passage is built from the answer's blocks: no Markdown marks, its code
    in a code block and the question's words marked, as the server-rendered passages
    show theirs."""
    weather = weather_source(crane.workspace)
    source, _ = do_create_text_source(
        workspace=crane.workspace,
        title="winch log",
        text="## Winch log\n\nThe **harbour crane** winch was checked.\n\n"
        "```\n# winch check\nlift --test crane\n```\nIt passed.",
        options=validate_source_options(),
    )
    run_pending(source)

    def respond(body: dict[str, Any]) -> Reply:
        numbers = [n for n, text in passages_in(body).items() if "lift --test" in text]
        return Reply(content=f"The winch was checked [{numbers[0]}].")

    llm.responder = respond
    page.route(
        "**/api/v1/workspaces/*/ask",
        lambda route: route.continue_(
            post_data=json.dumps(
                {k: v for k, v in json.loads(route.request.post_data or "{}").items()
                 if k != "sources"}
            )
        ),
    )  # fmt: skip
    page.goto(f"/ask/?q=Was the harbour crane winch checked?&sources={weather.pk}")
    page.locator("#ask-answer a.cite").click()
    added = page.locator(".passage.from-answer.is-target")
    expect(added.locator(".passage-text p").first).to_have_text(
        "Winch log\n\nThe harbour crane winch was checked."
    )
    expect(added.locator("pre.passage-code code")).to_have_text("# winch check\nlift --test crane")
    assert "**" not in added.inner_text() and "```" not in added.inner_text()
    # The question's words are marked, as in the passages the page lists.
    expect(added.locator(".passage-text p mark")).to_have_text(
        ["Winch", "harbour", "crane", "winch", "checked"]
    )
    expect(added.locator("pre mark")).to_have_text(["winch", "crane"])
    screenshot(page, "ask-added-passage")


@pytest.mark.parametrize(
    ("dates", "expected"),
    [
        ("to=2000-01-01", {"ingested_to": "2000-01-01"}),
        # The crane's log has no date of its own: a document date range leaves it out.
        (
            "published_from=2020-01-01&published_to=2020-12-31",
            {"published_from": "2020-01-01", "published_to": "2020-12-31"},
        ),
    ],
)
def test_the_date_range_narrows_the_answer_s_passages_too(page, crane, llm, dates, expected):
    llm.responder = answering("Marta Olsen repaired it [{n}].")
    sent: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda request: (
            sent.append(json.loads(request.post_data or "{}"))
            if request.url.endswith("/ask") and request.method == "POST"
            else None
        ),
    )
    page.goto(f"/ask/?q={QUESTION}&{dates}")
    expect(page.locator(".no-passages")).to_be_visible()
    expect(page.locator("#ask-answer")).to_have_attribute("data-state", "done")
    expect(page.locator("#ask-answer a.cite")).to_have_count(0)
    assert sent and expected.items() <= sent[0].items()
    assert not any("Marta Olsen" in str(r.body) for r in llm.chat_requests)


def test_a_hostile_answer_renders_inert_and_an_invented_citation_is_no_link(page, crane, llm):
    llm.responder = answering(
        "Marta Olsen repaired it [{n}]. <script>window.__pwned=3</script> "
        '<img src=x onerror="window.__pwned=4"> [click me](javascript:window.__pwned=5) '
        "and a fake source [9]."
    )
    page.goto(f"/ask/?q={QUESTION}")
    expect(page.locator("#ask-answer")).to_have_attribute("data-state", "done")
    answer = page.locator("#ask-answer .answer-text")
    expect(answer).to_contain_text("<script>window.__pwned=3</script>")
    expect(answer).to_contain_text("[click me](javascript:window.__pwned=5)")
    assert answer.locator("a").count() == 1
    expect(answer.locator("a.cite")).to_have_attribute("href", "#passage-1")
    assert answer.locator("a[href^='javascript']").count() == 0
    expect(page.locator("#ask-answer .answer-warnings")).to_contain_text("Citation [9]")
    page.locator("text=click me").click()
    assert_inert(page)


def test_a_spent_answer_budget_is_shown_as_an_alert(page, crane, llm, settings):
    settings.ASK_MONTHLY_BUDGET_USD = 0.5
    LlmCall.objects.create(
        workspace=crane.workspace, purpose="answer", model="scripted-model", cost=Decimal(1)
    )
    page.goto(f"/ask/?q={QUESTION}")
    alert = page.locator("#ask-answer [role=alert]")
    expect(alert).to_contain_text("monthly answer budget")
    expect(page.locator(".passage").first).to_contain_text("Marta Olsen")  # still there
    assert llm.chat_requests == []


def test_a_failing_llm_is_shown_as_an_alert_with_its_reason(page, crane, llm):
    llm.script(Reply(status=400, content="the scripted model refuses"))
    page.goto(f"/ask/?q={QUESTION}")
    alert = page.locator("#ask-answer [role=alert]")
    expect(alert).to_contain_text("the scripted model refuses")
    expect(page.locator("#ask-answer .answer-status")).to_have_text("No answer.")
    expect(page.locator(".passage").first).to_contain_text("Marta Olsen")


def test_the_filters_and_the_mode_are_carried_in_the_url(page, crane):
    weather_source(crane.workspace)
    page.goto("/ask/")
    page.fill("#ask-q", "harbour crane channel")
    page.locator("details.ask-filters summary").click()
    page.select_option("#ask-sources", label="crane")
    page.fill("#ask-from", "2000-01-01")
    page.fill("#ask-to", "2999-12-31")
    page.check("input[name=mode][value=global]")
    page.click(".ask-row button")
    expect(page.locator(".passage").first).to_contain_text("Marta Olsen")
    expect(page.locator(".passages")).not_to_contain_text("Fog closed")
    url = page.url
    assert "sources=" in url and "from=2000-01-01" in url and "to=2999-12-31" in url
    assert "mode=global" in url

    page.goto(url)  # shared: the form shows the same filters
    expect(page.locator("#ask-sources option:checked")).to_have_text("crane")
    expect(page.locator("#ask-from")).to_have_value("2000-01-01")
    expect(page.locator("input[name=mode][value=global]")).to_be_checked()
    expect(page.locator(".passages")).not_to_contain_text("Fog closed")


def test_an_entity_chip_opens_its_panel_in_the_page(page, crane):
    page.goto(f"/ask/?q={QUESTION}")
    chip = page.locator("a.chip[data-entity-chip]").first
    name = chip.inner_text().split("\n")[0].strip()
    chip.click()
    panel = page.locator("#panel [data-panel-entity]")
    expect(panel).to_be_visible()
    expect(page.locator("#panel-title")).to_contain_text(name.split(" ")[0])
    assert "/ask/" in page.url
    page.click("#panel [data-panel-close]")
    expect(page.locator("#panel .panel-empty")).to_be_visible()
    assert_inert(page)


def test_the_explorer_s_ask_box_shows_passages_in_the_panel_and_highlights_them(page, crane):
    page.goto("/explore/")
    expect(page.locator("#explorer")).to_have_attribute("data-ready", "true")
    page.fill("#graph-ask", QUESTION)
    page.press("#graph-ask", "Enter")
    passages = page.locator("#panel .ask-panel-passages .passage")
    expect(passages.first).to_contain_text("Marta Olsen")
    expect(passages.first.locator("mark").first).to_be_visible()
    assert "/explore/" in page.url
    assert_inert(page)
    screenshot(page, "explorer-ask-panel")

    page.click("#panel button.show-in-graph")
    expect(page.locator("#graph-status")).to_contain_text(
        re.compile(r"[1-9]\d* entities of the answer highlighted")
    )
    expect(page.locator("#graph-canvas")).to_have_attribute("data-layout", "settled")
    expect(page).to_have_url(re.compile(r"seeds=\d"))
    expect(page.locator("#panel a.ask-full")).to_have_attribute(
        "href", "/ask/?ws=lab&q=Who+repaired+the+harbour+crane%3F"
    )
