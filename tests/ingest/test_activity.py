"""Progress inside a document is visible to everyone while the work runs (the Sources page
and the API read it from other connections), not only once the document is saved."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from explorer.source_display import activity_label
from ingest import stages
from ingest.actions.sources import do_start_source
from ingest.models import Document, DocumentStatus, Source
from tests.ingest.factories import pdf_bytes

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_pages_of_a_pdf_being_parsed_are_visible_to_other_connections(make_source):
    pages = [f"Page {n} of the ledger\nentry {n * 7}" for n in range(1, 2001)]
    source = make_source({"ledger.pdf": pdf_bytes(pages)})
    do_start_source(source=source, enqueue=False)
    document = Document.objects.get(source=source)
    failures: list[BaseException] = []

    def parse() -> None:  # as a worker does, on a connection of its own
        try:
            stages.parse(document=Document.objects.get(pk=document.pk))
        except BaseException as exc:  # reported on the test's thread
            failures.append(exc)
        finally:
            connection.close()

    worker = threading.Thread(target=parse)
    worker.start()
    seen: list[str] = []
    while worker.is_alive() and not seen:
        polled = Source.objects.get(pk=source.pk)
        status = Document.objects.values_list("status", flat=True).get(pk=document.pk)
        if polled.activity.get("unit") == "pages" and status != DocumentStatus.PARSED:
            seen.append(activity_label(polled))
        time.sleep(0.02)
    worker.join(120)
    assert not failures
    assert seen and seen[0].startswith("Parsing ")
    assert seen[0].endswith(" of 2,000 pages of ledger.pdf")
    assert Document.objects.get(pk=document.pk).status == DocumentStatus.PARSED
