"""The same content twice counts once: another upload, an overlapping crawl or a mirror page
of content the workspace has processed already shares the first document's chunks, vectors
and graph instead of adding its mentions and relation weights again; deleting either copy
leaves the other whole.

Everything is real: the whole pipeline (parse, chunk, embed, the offline spaCy extractor,
consolidation) on the embedded PostgreSQL, the API and the source page over HTTP.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from config.settings import base
from ingest.actions.pipeline import do_process_document
from ingest.actions.sources import (
    do_add_file,
    do_create_source,
    do_delete_source,
    do_reingest_source,
    do_start_source,
)
from ingest.models import Chunk, Document, DocumentStatus, Source, SourceStatus
from knowledge.models import Entity, ExtractionRun, Mention, Relation, RelationEvidence
from tests.ingest.crawl_site import CrawlSite, html_page
from tests.support import run_pending, signed_in
from workspaces.actions.workspaces import do_create_workspace

pytestmark = pytest.mark.django_db

REPORT = (
    b"# Harbour report\n\n"
    b"Google acquired DeepMind in 2014. The London start-up had been founded by Demis "
    b"Hassabis, Shane Legg and Mustafa Suleyman four years earlier. In 2016 DeepMind's "
    b"AlphaGo program defeated Lee Sedol, a professional Go player, in Seoul.\n\n"
    b"Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891 and studied physics "
    b"at the University of Paris. The Radium Institute was founded by Curie and the Pasteur "
    b"Institute in 1914.\n"
)

OTHER = (
    b"# Launch notes\n\n"
    b"Apple announced the iPhone 15 at its headquarters in Cupertino on Tuesday. The phone "
    b"uses the A17 Pro chip, which was designed by Apple and manufactured by TSMC in Taiwan. "
    b"Tim Cook said the device would ship in 40 countries.\n"
)


@pytest.fixture(autouse=True)
def whole_pipeline(ingest_stages_only, settings):
    """Counting once is about the graph: these tests run every stage, extraction (offline)
    and consolidation included, unlike the rest of the ingest suite."""
    settings.INGEST_PIPELINE_STAGES = list(base.INGEST_PIPELINE_STAGES)


def upload(workspace, files: dict[str, bytes], *, name: str) -> Source:
    source = do_create_source(workspace=workspace, kind="upload", name=name)
    for path, data in files.items():
        do_add_file(source=source, path=path, chunks=[data])
    do_start_source(source=source, enqueue=False)
    run_pending(source)
    source.refresh_from_db()
    return source


def graph(workspace) -> dict[str, Any]:
    """Everything a second copy of the content must not change: mention counts per entity,
    weight and evidence per relation, and the number of rows behind them."""
    return {
        "entities": {
            (e.name, e.type.name): e.mention_count
            for e in Entity.objects.for_workspace(workspace).select_related("type")
        },
        "relations": {
            (r.source.name, r.target.name, r.type.name): (r.weight, r.evidence_count)
            for r in Relation.objects.for_workspace(workspace).select_related(
                "source", "target", "type"
            )
        },
        "mentions": Mention.objects.filter(workspace=workspace).count(),
        "evidence": RelationEvidence.objects.filter(workspace=workspace).count(),
        "runs": ExtractionRun.objects.filter(workspace=workspace).count(),
        "chunks": Chunk.objects.filter(workspace=workspace).count(),
    }


def source_ids(workspace) -> set[tuple[int, ...]]:
    return {tuple(e.source_ids) for e in Entity.objects.for_workspace(workspace)}


def test_the_same_content_in_two_sources_counts_once_and_the_second_lists_the_duplicate(
    alice, embedder
):
    first = upload(alice.workspace, {"report.md": REPORT}, name="first")
    single = graph(alice.workspace)
    assert single["entities"][("Google", "organization")] == 1
    assert single["relations"], "the text should give the offline extractor relations"
    encoded = embedder.texts_encoded
    original = Document.objects.get(source=first)

    second = upload(alice.workspace, {"copy of report.md": REPORT}, name="second")

    duplicate = Document.objects.get(source=second)
    assert duplicate.status == DocumentStatus.DUPLICATE
    assert duplicate.duplicate_of_id == original.pk
    assert not Chunk.objects.filter(document=duplicate).exists()
    assert duplicate.text == original.text
    assert duplicate.title == original.title == "Harbour report"
    assert graph(alice.workspace) == single  # counts, weights and rows as after one upload
    assert embedder.texts_encoded == encoded  # no vector computed again
    assert source_ids(alice.workspace) == {(first.pk,)}
    assert second.status == SourceStatus.DONE
    assert second.counters["duplicates"] == 1
    assert second.counters["pending"] == 0

    # The API lists it on the source and says it on the document.
    client = alice.client()
    detail = client.get(f"/api/v1/workspaces/acme/sources/{second.pk}").json()
    assert detail["duplicates"] == [
        {
            "id": duplicate.pk,
            "path": "copy of report.md",
            "duplicate_of_id": original.pk,
            "original_path": "report.md",
            "original_title": "Harbour report",
            "original_source_id": first.pk,
            "original_source_name": "first",
        }
    ]
    document = client.get(f"/api/v1/workspaces/acme/documents/{duplicate.pk}").json()
    assert document["status"] == "duplicate"
    assert document["duplicate_of_id"] == original.pk
    assert document["duplicate_of_source_id"] == first.pk
    listed = client.get(f"/api/v1/workspaces/acme/sources/{first.pk}/documents").json()
    assert [d["duplicate_of_id"] for d in listed["items"]] == [None]

    # The source page links to the original.
    page = signed_in(alice).get(f"/sources/{second.pk}/?ws=acme").content.decode()
    assert f'id="duplicate-link-{duplicate.pk}" href="/documents/{original.pk}/?ws=acme"' in page
    assert f'href="/sources/{first.pk}/?ws=acme">first</a>' in page
    document_page = signed_in(alice).get(f"/documents/{duplicate.pk}/?ws=acme").content.decode()
    assert f'href="/documents/{original.pk}/?ws=acme"' in document_page


def test_deleting_the_first_source_keeps_the_graph_and_the_second_takes_the_chunks(alice):
    first = upload(alice.workspace, {"report.md": REPORT}, name="first")
    single = graph(alice.workspace)
    original = Document.objects.get(source=first)
    chunk_ids = set(Chunk.objects.filter(document=original).values_list("pk", flat=True))
    second = upload(alice.workspace, {"copy.md": REPORT}, name="second")
    duplicate = Document.objects.get(source=second)

    assert do_delete_source(source_id=first.pk)

    assert not Source.objects.filter(pk=first.pk).exists()
    duplicate.refresh_from_db()
    assert duplicate.status == DocumentStatus.DONE
    assert duplicate.duplicate_of_id is None
    # The very same chunks (vectors, runs, evidence) now belong to the survivor.
    assert set(Chunk.objects.filter(document=duplicate).values_list("pk", flat=True)) == chunk_ids
    for chunk in Chunk.objects.filter(document=duplicate):
        assert duplicate.text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.embedding is not None
    assert graph(alice.workspace) == single
    # What was derived from where the evidence is follows it to the surviving source.
    assert source_ids(alice.workspace) == {(second.pk,)}
    second.refresh_from_db()
    assert second.counters["chunks"] == len(chunk_ids)
    assert second.counters["duplicates"] == 0
    assert second.counters["done"] == 1

    # The survivor is an ordinary original now: deleting it takes the graph with it.
    do_delete_source(source_id=second.pk)
    assert not Entity.objects.for_workspace(alice.workspace).exists()
    assert not Chunk.objects.filter(workspace=alice.workspace).exists()


def test_deleting_the_second_source_leaves_the_first_intact(alice):
    first = upload(alice.workspace, {"report.md": REPORT}, name="first")
    single = graph(alice.workspace)
    original = Document.objects.get(source=first)
    second = upload(alice.workspace, {"copy.md": REPORT}, name="second")

    do_delete_source(source_id=second.pk)

    original.refresh_from_db()
    assert original.status == DocumentStatus.DONE
    assert graph(alice.workspace) == single
    assert source_ids(alice.workspace) == {(first.pk,)}
    assert not Document.objects.filter(source_id=second.pk).exists()


def test_duplicates_within_one_source_count_once(alice, make_member):
    reference = do_create_workspace(slug="reference", name="Reference")
    upload(reference, {"report.md": REPORT}, name="single")
    single = graph(reference)

    source = upload(
        alice.workspace,
        {"report.md": REPORT, "mirror/report.md": REPORT, "launch.md": OTHER},
        name="mirrored",
    )

    documents = {d.path: d for d in Document.objects.filter(source=source)}
    assert documents["launch.md"].status == DocumentStatus.DONE
    # Whichever copy was processed first is the original, the other its duplicate.
    copies = [documents["report.md"], documents["mirror/report.md"]]
    assert sorted(d.status for d in copies) == ["done", "duplicate"]
    original = next(d for d in copies if d.status == DocumentStatus.DONE)
    duplicate = next(d for d in copies if d.status == DocumentStatus.DUPLICATE)
    assert duplicate.duplicate_of_id == original.pk
    assert not Chunk.objects.filter(document=duplicate).exists()
    report_chunks = set(Chunk.objects.filter(document=original).values_list("pk", flat=True))
    counts = {
        key: n for key, n in graph(alice.workspace)["entities"].items() if key in single["entities"]
    }
    assert counts == single["entities"]
    mirrored_mentions = Mention.objects.filter(chunk_id__in=report_chunks).count()
    assert mirrored_mentions == single["mentions"]
    assert source.counters["duplicates"] == 1
    assert source.status == SourceStatus.DONE

    # The mirror is read as a document of the source like the others: re-ingesting the
    # unchanged source does nothing to it.
    assert do_reingest_source(source=source, enqueue=False) == 0


def test_mirror_pages_of_one_crawl_and_an_overlapping_crawl_count_once(alice, settings):
    from ingest.actions.crawl import (
        do_create_crawl_source,
        do_run_crawl,
        do_start_crawl,
        validate_crawl_settings,
    )
    from ingest.actions.pipeline import do_process_documents

    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.CRAWL_GONE_GRACE_SECONDS = 0  # a gone page's document goes at its first 410
    article = html_page("Harbour report", [REPORT.decode().split("\n\n", 1)[1]])
    with CrawlSite(crawl_delay=None) as site:
        site.pages = {
            "/": html_page(
                "Home",
                ["The harbour archive."],
                [("/report", "Report"), ("/mirror/report", "Report (mirror)")],
            ),
            "/report": article,
            "/mirror/report": article,
        }

        def crawl(name: str) -> Source:
            config = validate_crawl_settings(url=site.url("/"), mode="recursive", rate=0)
            source = do_create_crawl_source(workspace=alice.workspace, crawl=config, name=name)
            do_start_crawl(source=source, enqueue=False)
            do_run_crawl(
                source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids)
            )
            source.refresh_from_db()
            return source

        first = crawl("first crawl")
        statuses = sorted(Document.objects.filter(source=first).values_list("status", flat=True))
        assert statuses == ["done", "done", "duplicate"]
        once = graph(alice.workspace)
        assert once["entities"][("Google", "organization")] == 1

        second = crawl("second crawl")

        assert set(Document.objects.filter(source=second).values_list("status", flat=True)) == {
            "duplicate"
        }
        assert graph(alice.workspace) == once
        originals = Document.objects.filter(source=first, duplicate_of__isnull=True)
        assert set(
            Document.objects.filter(source=second).values_list("duplicate_of", flat=True)
        ) == set(originals.values_list("pk", flat=True))

        # The original page disappears from the site: its mirror in the same crawl takes
        # over its chunks (the second crawl's copies follow), and the graph stays.
        copies = Document.objects.filter(source=first, path__endswith="report")
        original = copies.get(duplicate_of__isnull=True)
        mirror = copies.get(duplicate_of=original)
        chunk_ids = set(Chunk.objects.filter(document=original).values_list("pk", flat=True))
        site.pages[original.path.removeprefix(site.base_url)] = html_page(
            "Gone", ["Removed."], status=410
        )
        do_start_crawl(source=first, enqueue=False)
        do_run_crawl(source_id=first.pk, process=lambda ids: do_process_documents(document_ids=ids))

    assert not Document.objects.filter(pk=original.pk).exists()
    mirror.refresh_from_db()
    assert mirror.status == DocumentStatus.DONE
    assert mirror.duplicate_of_id is None
    assert set(Chunk.objects.filter(document=mirror).values_list("pk", flat=True)) == chunk_ids
    assert set(
        Document.objects.filter(source=second, path__endswith="report").values_list(
            "duplicate_of", flat=True
        )
    ) == {mirror.pk}
    assert graph(alice.workspace) == once


def test_changed_content_detaches_a_duplicate(alice):
    first = upload(alice.workspace, {"report.md": REPORT}, name="first")
    single = graph(alice.workspace)
    original = Document.objects.get(source=first)
    second = upload(alice.workspace, {"notes.md": REPORT}, name="second")
    duplicate = Document.objects.get(source=second)
    assert duplicate.status == DocumentStatus.DUPLICATE

    added = do_add_file(source=second, path="notes.md", chunks=[OTHER])
    assert added.changed
    do_start_source(source=second, enqueue=False)
    run_pending(second)

    duplicate.refresh_from_db()
    assert duplicate.status == DocumentStatus.DONE
    assert duplicate.duplicate_of_id is None
    assert duplicate.title == "Launch notes"
    assert Chunk.objects.filter(document=duplicate).exists()
    now = graph(alice.workspace)
    assert now["entities"][("Apple", "organization")] >= 1
    for key, count in single["entities"].items():
        assert now["entities"][key] == count
    original.refresh_from_db()
    assert original.status == DocumentStatus.DONE
    assert {tuple(e.source_ids) for e in Entity.objects.filter(name="Apple")} == {(second.pk,)}

    # Changed back to the first content: a duplicate again, its own chunks and graph gone.
    do_add_file(source=second, path="notes.md", chunks=[REPORT])
    do_start_source(source=second, enqueue=False)
    run_pending(second)
    duplicate.refresh_from_db()
    assert duplicate.status == DocumentStatus.DUPLICATE
    assert duplicate.duplicate_of_id == original.pk
    assert not Chunk.objects.filter(document=duplicate).exists()
    now = graph(alice.workspace)
    assert now.pop("runs") == single.pop("runs") + 1  # the other content's stays cached
    assert now == single


def test_an_original_whose_content_changes_hands_the_old_content_to_its_duplicate(alice):
    first = upload(alice.workspace, {"report.md": REPORT}, name="first")
    single = graph(alice.workspace)
    original = Document.objects.get(source=first)
    old_chunks = set(Chunk.objects.filter(document=original).values_list("pk", flat=True))
    second = upload(alice.workspace, {"copy.md": REPORT}, name="second")
    duplicate = Document.objects.get(source=second)

    do_add_file(source=first, path="report.md", chunks=[OTHER])
    do_start_source(source=first, enqueue=False)
    run_pending(first)
    run_pending(second)  # the heir finishes its own processing (nothing is sent again)

    duplicate.refresh_from_db()
    original.refresh_from_db()
    assert duplicate.status == DocumentStatus.DONE
    assert duplicate.duplicate_of_id is None
    assert set(Chunk.objects.filter(document=duplicate).values_list("pk", flat=True)) == old_chunks
    assert original.status == DocumentStatus.DONE
    assert original.title == "Launch notes"
    now = graph(alice.workspace)
    for key, count in single["entities"].items():
        assert now["entities"][key] == count
    assert now["entities"][("Apple", "organization")] >= 1
    assert {tuple(e.source_ids) for e in Entity.objects.filter(name="Google")} == {(second.pk,)}
    assert {tuple(e.source_ids) for e in Entity.objects.filter(name="Apple")} == {(first.pk,)}


@pytest.mark.django_db(transaction=True)
def test_two_identical_documents_processed_at_the_same_time_get_one_original(alice, settings):
    sources = []
    for name in ("left", "right"):
        source = do_create_source(workspace=alice.workspace, kind="upload", name=name)
        do_add_file(source=source, path=f"{name}.md", chunks=[REPORT])
        do_start_source(source=source, enqueue=False)
        sources.append(source)
    ids = [Document.objects.get(source=s).pk for s in sources]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def process(document_id: int) -> None:
        try:
            start.wait()
            do_process_document(document_id=document_id)
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=process, args=(pk,)) for pk in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert not errors
    documents = list(Document.objects.filter(pk__in=ids).order_by("pk"))
    assert sorted(d.status for d in documents) == ["done", "duplicate"]
    original = next(d for d in documents if d.status == "done")
    duplicate = next(d for d in documents if d.status == "duplicate")
    assert duplicate.duplicate_of_id == original.pk
    assert Chunk.objects.filter(workspace=alice.workspace).count() == (
        Chunk.objects.filter(document=original).count()
    )
    assert not Chunk.objects.filter(document=duplicate).exists()
