"""Guards on noise and cost (issue 41): the relevance filter of a crawl, known-only
extraction that sends no window without a known name, the per-window caps, and the
workspace's monthly LLM budget pausing and resuming extraction. Against a real local site,
the real pipeline and a real local chat-completions server."""

from __future__ import annotations

import itertools
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ingest.actions.crawl import do_create_crawl, do_run_crawl
from ingest.actions.pipeline import do_process_documents
from ingest.actions.slices import do_requeue_stranded_work
from ingest.actions.sources import do_create_text_source, validate_source_options
from ingest.models import Document, DocumentStatus, SourceStatus
from knowledge.actions.extraction.monthly_budget import PAUSED_PREFIX, do_set_workspace_llm_budget
from knowledge.extraction.extractors import reset_extractor
from knowledge.extraction.relevance import judge_relevance
from knowledge.models import (
    Entity,
    ExtractionRun,
    ExtractionStatus,
    LlmCall,
    Mention,
    SourceExtraction,
)
from tests.ingest.crawl_site import TEXT, CrawlSite, Page, html_page
from tests.knowledge.conftest import World, window_text
from tests.support import run_pending

# --- the relevance filter -------------------------------------------------------------------

SAILING = [
    [
        "Reefing the mainsail early keeps a small sailing boat upright when the wind rises.",
        "Ease the main sheet, lower the halyard, tie the reef points and tension the outhaul.",
        "A sailor who reefs before the squall arrives keeps control of the helm and the boat.",
    ],
    [
        "Tacking turns the bow of the sailing boat through the wind onto the other tack.",
        "The helmsman calls ready about, the crew releases the jib sheet and trims it again.",
        "Sailing close hauled, a yacht points about forty five degrees off the true wind.",
    ],
    [
        "Anchoring a yacht: choose a sheltered bay, check the depth and the tidal range.",
        "Let out chain five times the depth, then motor astern gently to set the anchor.",
        "Seamanship means watching the weather, the tide and the boat at anchor overnight.",
    ],
]
BAKING = [
    [
        "Knead the bread dough for ten minutes until it is smooth, elastic and springs back.",
        "Let the dough rise in a warm kitchen until it doubles, then shape the loaf gently.",
        "Bake the loaf in a hot oven until the crust is brown and it sounds hollow underneath.",
    ],
    [
        "A sourdough starter is flour and water fermented by wild yeast and lactic bacteria.",
        "Feed the starter every day; bubbles and a sour smell mean the culture is active.",
        "Mix the levain into the dough, fold it every half hour and prove it in a basket.",
    ],
]
TOPIC = "Sailing boats and seamanship"


def topic_site(site: CrawlSite) -> None:
    """A start page linking three pages about sailing and two about baking bread."""
    links = [(f"/sail-{i}.html", f"Sailing {i}") for i in range(len(SAILING))]
    links += [(f"/bake-{i}.html", f"Baking {i}") for i in range(len(BAKING))]
    pages = {
        "/robots.txt": Page(b"User-agent: *\nAllow: /\n", TEXT),
        "/": html_page("Sailing club handbook", [SAILING[0][0]], links),
    }
    pages.update(
        {f"/sail-{i}.html": html_page(f"Sailing {i}", text) for i, text in enumerate(SAILING)}
    )
    pages.update(
        {f"/bake-{i}.html": html_page(f"Baking {i}", text) for i, text in enumerate(BAKING)}
    )
    site.pages = pages


def test_a_crawl_with_a_topic_keeps_off_topic_pages_but_extracts_only_the_on_topic_ones(
    llm, alice, settings
):
    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.EXTRACTION_GLEANING_PASSES = 0
    reset_extractor()
    llm.responder = World(entities={"mainsail": "concept", "sourdough starter": "concept"})
    with CrawlSite(crawl_delay=None) as site:
        topic_site(site)
        source = do_create_crawl(
            workspace=alice.workspace,
            url=site.url("/"),
            mode="recursive",
            max_pages=10,
            rate=0,
            topic=TOPIC,
            role="admin",
            enqueue=False,
        )
        do_run_crawl(
            source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids)
        )
    source.refresh_from_db()

    documents = {d.path.rsplit("/", 1)[-1]: d for d in Document.objects.filter(source=source)}
    assert len(documents) == 6
    assert all(d.status == DocumentStatus.DONE for d in documents.values())
    off = {name for name, d in documents.items() if d.off_topic}
    assert off == {"bake-0.html", "bake-1.html"}
    threshold = settings.CRAWL_TOPIC_MIN_SIMILARITY
    similarity = {n: d.topic_similarity for n, d in documents.items()}
    measured = {n: float(v) for n, v in similarity.items() if v is not None}
    assert measured.keys() == documents.keys()
    assert all(measured[name] < threshold for name in off)
    assert all(v >= threshold for name, v in measured.items() if name not in off)
    assert source.counters["off_topic"] == 2
    assert source.settings["topic"] == TOPIC
    # Not one window of the baking pages went to the LLM; every sailing page's did.
    sent = [window_text(r.body) for r in llm.chat_requests]
    assert not any("dough" in text or "starter" in text for text in sent)
    assert sum("Sailing" in text for text in sent) >= 3
    assert not Mention.objects.filter(chunk__document__off_topic=True).exists()
    assert Entity.objects.filter(workspace=alice.workspace, name="mainsail").exists()
    assert not Entity.objects.filter(workspace=alice.workspace, name="sourdough starter").exists()


def test_the_decision_keeps_what_it_cannot_measure_and_cuts_at_the_threshold():
    north, east = [1.0, 0.0], [0.0, 1.0]
    assert judge_relevance([], north, threshold=0.5).on_topic
    assert judge_relevance([north], None, threshold=0.5).similarity is None
    on = judge_relevance([north, [0.9, 0.1]], north, threshold=0.5)
    off = judge_relevance([east], north, threshold=0.5)
    assert on.on_topic and (on.similarity or 0) > 0.9
    assert not off.on_topic and off.similarity == 0.0
    assert judge_relevance([east], north, threshold=0.0).on_topic  # at the threshold: kept


@pytest.mark.parametrize("topic", [123, "x" * 1001])
def test_a_topic_that_is_not_words_or_too_long_is_refused(topic):
    from workspaces.errors import InvalidInput

    with pytest.raises(InvalidInput, match="topic"):
        validate_source_options(topic=topic)


# --- known-only: no window without a known name ---------------------------------------------


def test_known_only_sends_no_window_that_names_no_known_entity(llm, ingest_text, alice, settings):
    settings.EXTRACTION_GLEANING_PASSES = 0
    reset_extractor()
    llm.responder = World(
        entities={"Ada Lovelace": "person", "Charles Babbage": "person", "Kew": "location"}
    )
    ingest_text("Ada Lovelace worked with Charles Babbage on the engine.")
    llm.clear_requests()

    source, _ = do_create_text_source(
        workspace=alice.workspace,
        title="letters",
        text="Ada Lovelace wrote about the engine.",
        options=validate_source_options(known_only=True),
    )
    from ingest.actions.sources import do_add_text

    do_add_text(source=source, title="garden", text="The gardens at Kew were in flower in May.")
    run_pending(source)

    sent = [window_text(r.body) for r in llm.chat_requests]
    assert len(sent) == 1
    assert "Ada Lovelace" in sent[0]
    assert not any("Kew" in text for text in sent)
    assert set(Document.objects.filter(source=source).values_list("status", flat=True)) == {
        DocumentStatus.DONE
    }
    account = SourceExtraction.objects.get(source=source)
    assert account.counts["windows_skipped_unknown"] == 1
    assert not Entity.objects.filter(name="Kew").exists()
    assert Entity.objects.get(name="Ada Lovelace").mention_count == 2


def test_known_only_windows_without_a_known_name_skip_the_offline_extractor_too(ingest_text):
    ingest_text("Grace Hopper worked on the Harvard Mark I computer in Cambridge.")
    runs_before = ExtractionRun.objects.count()
    source = ingest_text(
        "Mary Somerville wrote On the Connexion of the Physical Sciences in London.",
        title="somerville",
        known_only=True,
    )

    assert ExtractionRun.objects.count() == runs_before  # nothing was extracted at all
    account = SourceExtraction.objects.get(source=source)
    assert account.counts["windows_skipped_unknown"] == 1
    assert Document.objects.get(source=source).status == DocumentStatus.DONE


# --- the per-window caps --------------------------------------------------------------------


def test_the_caps_default_to_20_entities_and_30_relations():
    from config.settings import base

    assert (base.EXTRACTION_MAX_ENTITIES_PER_WINDOW, base.EXTRACTION_MAX_RELATIONS_PER_WINDOW) == (
        20,
        30,
    )


def test_what_the_caps_cut_is_counted_on_the_run_and_the_source(llm, ingest_text, settings):
    settings.EXTRACTION_GLEANING_PASSES = 0
    reset_extractor()
    names = [f"Station {i}" for i in range(25)]
    lines = [f'("entity"<|>{n}<|>location<|>A survey station.)' for n in names]
    lines += [
        f'("relationship"<|>{a}<|>{b}<|>related_to<|>Near each other.<|>near<|>5)'
        for a, b in itertools.pairwise(names)
    ]
    lines += [
        f'("relationship"<|>{a}<|>{b}<|>related_to<|>Near each other.<|>near<|>5)'
        for a, b in zip(names, names[2:], strict=False)
    ]
    assert len(lines) - 25 == 47
    llm.script("\n".join([*lines, "<|COMPLETE|>"]))
    source = ingest_text(" ".join(f"{n} lies on the ridge." for n in names))

    run = ExtractionRun.objects.get()
    assert len(run.result["entities"]) == 20
    assert len(run.result["relations"]) == 30
    assert run.counts["entities_capped"] == 5
    assert run.counts["relations_capped"] == 17
    account = SourceExtraction.objects.get(source=source)
    assert account.counts["entities_capped"] == 5
    assert account.counts["relations_capped"] == 17


def test_the_offline_extractor_is_capped_and_counted_too(ingest_text, settings):
    settings.EXTRACTION_MAX_ENTITIES_PER_WINDOW = 2
    settings.EXTRACTION_MAX_RELATIONS_PER_WINDOW = 1
    source = ingest_text(
        "Grace Hopper met Alan Turing and John von Neumann in Princeton. Ada Lovelace wrote "
        "to Charles Babbage in London, and Mary Somerville visited Paris with them."
    )

    run = ExtractionRun.objects.get()
    assert run.extractor == "offline"
    assert len(run.result["entities"]) == 2
    assert len(run.result["relations"]) <= 1
    assert run.counts["entities_capped"] >= 3
    account = SourceExtraction.objects.get(source=source)
    assert account.counts["entities_capped"] == run.counts["entities_capped"]


# --- the workspace's monthly LLM budget ----------------------------------------------------


def long_text(paragraphs: int) -> str:
    return "\n\n".join(
        f"Paragraph {i}: Station {i} of the survey lies near Ridge {i}. "
        + " ".join(f"Observation {i}.{j} recorded stable readings at the site." for j in range(12))
        for i in range(paragraphs)
    )


@pytest.fixture
def priced_llm(llm, settings):
    """Every token costs a tenth of a cent; windows go out one at a time, without gleaning."""
    settings.LLM_PRICE_INPUT_PER_MTOK = 1000.0
    settings.LLM_PRICE_OUTPUT_PER_MTOK = 1000.0
    settings.EXTRACTION_GLEANING_PASSES = 0
    settings.EXTRACTION_WINDOW_TOKENS = 300
    settings.LLM_CONCURRENCY = 1
    reset_extractor()
    llm.responder = World(entities={"Station 1": "location", "Station 5": "location"})
    return llm


def test_extraction_pauses_at_the_monthly_budget_and_resumes_when_it_is_raised(
    priced_llm, alice, django_capture_on_commit_callbacks
):
    do_set_workspace_llm_budget(workspace=alice.workspace, amount="0.01")
    source, _ = do_create_text_source(workspace=alice.workspace, title="survey", text=long_text(8))
    run_pending(source)

    # One window went out and spent the budget; no other was sent, and the document waits.
    assert len(priced_llm.chat_requests) == 1
    assert LlmCall.objects.get().cost > Decimal("0.01")
    document = Document.objects.get(source=source)
    assert document.status == DocumentStatus.EMBEDDED
    source.refresh_from_db()
    assert source.status == SourceStatus.RUNNING  # paused, not failed
    assert source.warning.startswith(PAUSED_PREFIX)
    assert "0.01 USD" in source.warning
    account = SourceExtraction.objects.get(source=source)
    assert account.status == ExtractionStatus.PAUSED
    assert account.message == source.warning

    # Processing it again (the stranded-work job) sends nothing while the budget is spent.
    run_pending(source)
    assert len(priced_llm.chat_requests) == 1
    assert Document.objects.get(source=source).status == DocumentStatus.EMBEDDED

    with django_capture_on_commit_callbacks(execute=True):
        do_set_workspace_llm_budget(workspace=alice.workspace, amount="100")
    queued = DBTaskResult.objects.filter(args_kwargs__kwargs__source_id=source.pk)
    assert queued.exists()  # the waiting document was queued again at once
    run_pending(source)

    windows = len(priced_llm.chat_requests)
    assert windows >= 4
    assert Document.objects.get(source=source).status == DocumentStatus.DONE
    source.refresh_from_db()
    assert source.warning == ""
    assert source.status == SourceStatus.DONE
    assert SourceExtraction.objects.get(source=source).status != ExtractionStatus.PAUSED
    assert Entity.objects.filter(workspace=alice.workspace, name="Station 5").exists()


def test_a_paused_source_goes_on_when_the_month_turns_through_the_stranded_work_job(
    priced_llm, alice, settings, django_capture_on_commit_callbacks
):
    do_set_workspace_llm_budget(workspace=alice.workspace, amount="0.01")
    source, _ = do_create_text_source(workspace=alice.workspace, title="survey", text=long_text(6))
    run_pending(source)
    assert Document.objects.get(source=source).status == DocumentStatus.EMBEDDED

    # Last month's spending does not count this month (and this month's calls are free,
    # so every window left fits); no task of the source is open.
    LlmCall.objects.update(created_at=timezone.now() - timedelta(days=40))
    settings.LLM_PRICE_INPUT_PER_MTOK = settings.LLM_PRICE_OUTPUT_PER_MTOK = 0.0
    DBTaskResult.objects.all().delete()
    with django_capture_on_commit_callbacks(execute=True):
        requeued = do_requeue_stranded_work(idle_for=timedelta(microseconds=1))
    assert source.pk in requeued
    run_pending(source)

    assert Document.objects.get(source=source).status == DocumentStatus.DONE
    source.refresh_from_db()
    assert not source.warning.startswith(PAUSED_PREFIX)


def test_a_budget_of_0_is_no_limit_and_the_default_is_finite(priced_llm, alice, settings):
    from config.settings import base

    assert base.LLM_WORKSPACE_MONTHLY_BUDGET_USD == 20.0
    settings.LLM_PRICE_INPUT_PER_MTOK = settings.LLM_PRICE_OUTPUT_PER_MTOK = 20_000.0
    do_set_workspace_llm_budget(workspace=alice.workspace, amount="0")
    source, _ = do_create_text_source(workspace=alice.workspace, title="survey", text=long_text(6))
    run_pending(source)

    assert Document.objects.get(source=source).status == DocumentStatus.DONE
    assert LlmCall.objects.count() >= 3
    assert sum(c.cost for c in LlmCall.objects.all()) > Decimal(20)  # past the default


def test_the_budget_is_refused_when_it_is_not_an_amount(alice):
    from workspaces.errors import InvalidInput

    for bad in ("-1", "lots", "1e20", "nan"):
        with pytest.raises(InvalidInput, match="llm_monthly_budget_usd"):
            do_set_workspace_llm_budget(workspace=alice.workspace, amount=bad)
    alice.workspace.refresh_from_db()
    assert alice.workspace.llm_monthly_budget_usd is None
