"""A re-crawl through the whole pipeline (parse, chunk, embed, LLM extraction against a
real local chat-completions server) of a real local website where, between crawls, one
page changes, one disappears and one stays the same: the unchanged page costs no parse,
embedding or extraction; the changed one is extracted again and its old evidence goes;
the gone one keeps its document and evidence through the grace period and loses them after
it; curation (a merge, a rename, a block) holds throughout; the source records what each
round changed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone

from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.pipeline import do_process_documents
from ingest.embeddings import get_embedder
from ingest.models import Chunk, CrawlPage, Document, Source
from knowledge.actions.curation.block import do_block_name
from knowledge.actions.curation.entities import do_rename_entity
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.models import Entity, EntityState, Mention
from tests.ingest.crawl_site import CrawlSite, html_page
from tests.knowledge.conftest import World, window_text

pytestmark = pytest.mark.django_db

CHANGING = [
    "Charles Babbage designed the Difference Engine in London.",
    "Ada Lovelace wrote the first published program for a machine like it.",
]
CHANGED = [
    "Charles Babbage designed the Difference Engine in London.",
    "Konrad Zuse built the Z3 in Berlin a century later, and Alan Kay wrote about it.",
]
STEADY = ["Grace Hopper programmed the Analytical Engine's distant descendants at Harvard."]
GOING = ["Alan Turing broke codes at Bletchley Park during the war."]

WORLD = World(
    entities={
        "Charles Babbage": "person",
        "Difference Engine": "product",
        "Ada Lovelace": "person",
        "Konrad Zuse": "person",
        "Alan Kay": "person",
        "Grace Hopper": "person",
        "Analytical Engine": "product",
        "Alan Turing": "person",
        "Bletchley Park": "location",
    },
    relations=[("Alan Turing", "Bletchley Park", "related_to")],
)


@pytest.fixture
def site(settings) -> Iterator[CrawlSite]:
    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.CRAWL_TIMEOUT_SECONDS = 2.0
    with CrawlSite(crawl_delay=None) as running:
        running.pages = {
            "/": html_page(
                "Computing history",
                ["Notes on the people and machines of computing."],
                [("/machines", "Machines"), ("/people", "People"), ("/war", "War")],
            ),
            "/machines": html_page("Machines", CHANGING),
            "/people": html_page("People", STEADY),
            "/war": html_page("The war years", GOING),
        }
        yield running


def run_round(source: Source) -> Source:
    """One round of the crawl, its documents processed in this process as a worker would."""
    do_start_crawl(source=source, enqueue=False)
    do_run_crawl(source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids))
    source.refresh_from_db()
    return source


def active(workspace) -> set[str]:
    return set(
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .values_list("name", flat=True)
    )


def entity(workspace, name: str) -> Entity:
    return Entity.objects.for_workspace(workspace).get(name=name, state=EntityState.ACTIVE)


CHANGES = ("added", "changed", "unchanged", "missing", "removed")


def only(**counts: int) -> dict[str, int]:
    """What a round did, as `run_counts` reads it: the counts named, the others 0."""
    return {change: counts.get(change, 0) for change in CHANGES}


def run_counts(source: Source) -> dict[str, int]:
    return {k: source.last_run[k] for k in CHANGES}


@pytest.mark.slow(reason="three crawls of a real server through the whole pipeline")
def test_a_recrawl_redoes_only_the_changed_page_and_retires_a_gone_one_after_its_grace(
    alice, site, llm, settings
):
    llm.responder = WORLD
    workspace = alice.workspace
    embedder = get_embedder()
    config = validate_crawl_settings(url=site.url("/"), mode="recursive", max_depth=1, rate=0)
    source = run_round(do_create_crawl_source(workspace=workspace, crawl=config))
    assert source.status == "done"
    assert run_counts(source) == only(added=4)
    assert {"Ada Lovelace", "Difference Engine", "Grace Hopper", "Alan Turing"} <= active(workspace)

    # Curation between the crawls: a merge, a rename, a block.
    analytical = entity(workspace, "Analytical Engine")
    do_merge_entities(
        workspace=workspace,
        merged_ids=[entity(workspace, "Difference Engine").pk],
        survivor_id=analytical.pk,
    )
    babbage = entity(workspace, "Charles Babbage")
    do_rename_entity(workspace=workspace, entity_id=babbage.pk, name="Charles Babbage (1791)")
    do_block_name(workspace=workspace, name="Alan Kay")

    steady = Document.objects.get(source=source, path=site.url("/people"))
    steady_chunks = list(Chunk.objects.filter(document=steady).values_list("pk", "content_hash"))
    changing = Document.objects.get(source=source, path=site.url("/machines"))
    going = Document.objects.get(source=source, path=site.url("/war"))
    turing = entity(workspace, "Alan Turing")

    # Round 2: one page changes, one disappears, the others stay the same.
    site.pages["/machines"] = html_page("Machines", CHANGED)
    site.pages["/war"] = html_page("Gone", ["This page was removed."], status=410)
    llm.clear_requests()
    site.clear_log()
    encoded = embedder.texts_encoded
    source = run_round(source)

    assert source.status == "done"
    assert run_counts(source) == only(changed=1, unchanged=2, missing=1)
    # The unchanged page: asked for conditionally, never queued again, so neither parsed,
    # embedded nor extracted; its chunks are the same rows.
    assert all("if-none-match" in r.headers for r in site.requests_to("/people"))
    assert Document.objects.get(pk=steady.pk).updated_at == steady.updated_at
    assert (
        list(Chunk.objects.filter(document=steady).values_list("pk", "content_hash"))
        == steady_chunks
    )
    sent = [window_text(r.body) for r in llm.chat_requests]
    assert sent, "the changed page was extracted again"
    assert not any("Grace Hopper" in text for text in sent)
    assert all("Konrad Zuse" in text for text in sent if text)
    assert embedder.texts_encoded > encoded  # the changed page's new chunk
    # The changed page: the new text's entities, none of the old text's left over.
    changing.refresh_from_db()
    assert "Konrad Zuse" in changing.text
    names = active(workspace)
    assert "Konrad Zuse" in names
    assert "Ada Lovelace" not in names
    mentions = Mention.objects.filter(chunk__document=changing)
    assert not mentions.filter(entity__name="Ada Lovelace").exists()
    # Every mention left points at the page's text as it is now.
    assert {changing.text[m.char_start : m.char_end] for m in mentions} >= {"Konrad Zuse"}
    assert all(changing.text[m.char_start : m.char_end] == m.surface_form for m in mentions)
    # Curation held: the merged name went to its survivor again, the renamed entity kept
    # its name, the blocked name made no entity.
    assert "Difference Engine" not in names
    assert Mention.objects.filter(entity=analytical, chunk__document=changing).exists()
    assert "Charles Babbage (1791)" in names
    assert "Charles Babbage" not in names
    assert Mention.objects.filter(entity=babbage, chunk__document=changing).exists()
    assert "Alan Kay" not in names
    # The gone page: marked, its document and evidence kept for the grace period.
    page = CrawlPage.objects.get(source=source, url=site.url("/war"))
    assert page.gone_at is not None
    assert page.run_change == "missing"
    assert "kept until" in page.reason
    assert Document.objects.filter(pk=going.pk).exists()
    assert entity(workspace, "Alan Turing").pk == turing.pk
    assert Mention.objects.filter(entity=turing, chunk__document=going).exists()

    # Round 3, after the grace period (the mark moved back past it): still gone, retired.
    CrawlPage.objects.filter(pk=page.pk).update(
        gone_at=timezone.now() - timedelta(seconds=settings.CRAWL_GONE_GRACE_SECONDS + 60)
    )
    llm.clear_requests()
    encoded = embedder.texts_encoded
    source = run_round(source)

    assert run_counts(source) == only(unchanged=3, removed=1)
    assert not Document.objects.filter(pk=going.pk).exists()
    assert not Mention.objects.filter(chunk__document_id=going.pk).exists()
    assert not Mention.objects.filter(entity=turing).exists()
    names = active(workspace)
    assert "Alan Turing" not in names
    assert "Bletchley Park" not in names
    page.refresh_from_db()
    assert (page.document_id, page.run_change) == (None, "removed")
    assert page.reason == "HTTP 410: gone; its document was removed"
    # Nothing else did any work, and curation still holds.
    assert llm.chat_requests == []
    assert embedder.texts_encoded == encoded
    assert {"Charles Babbage (1791)", "Analytical Engine", "Grace Hopper"} <= names
    assert "Difference Engine" not in names
    assert source.counters["pages_removed"] == 1
