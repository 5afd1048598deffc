"""A document's own date in retrieval: `published_from` / `published_to` scope hybrid search,
its API, the ask API and the Ask page (undated documents are outside any range); every hit
and passage says its document's date; the recency preference is off by default, and off it
leaves the ranking exactly as it is without any dates, while on it lifts a newer document.

Documents go through the real pipeline (chunking, the packaged embedding model, the offline
extractor); their dates are set on the rows, as ingestion would have set them (the dates
themselves are read by tests/ingest/test_document_dates.py)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest

from ingest.actions.sources import do_create_upload_source
from ingest.models import Document
from knowledge.retrieval import hybrid_search
from knowledge.retrieval.recency import RecencySettings, prefer_recent
from knowledge.retrieval.types import ChunkSignals
from tests.support import run_pending, signed_in
from workspaces.errors import InvalidInput

QUERY = "How were the harbour cranes repaired after the storm?"
# Six notes of about the same relevance to QUERY, each its own document.
NOTES = {
    "winch": "The harbour crane's winch was repaired after the storm by the night crew.",
    "cable": "After the storm the crane cables in the harbour were replaced and tested.",
    "boom": "Storm damage to the harbour crane boom was welded and repainted in March.",
    "motor": "The crane motor flooded in the storm; the harbour workshop rebuilt it.",
    "rails": "Harbour crane rails bent by the storm surge were straightened and bolted.",
    "cabin": "The operator cabin of the harbour crane lost its windows in the storm.",
}


@pytest.fixture
def notes(alice) -> dict[str, Document]:
    """The notes as one upload (one group through the pipeline), titled by their keys."""
    source, _ = do_create_upload_source(
        workspace=alice.workspace,
        files=[
            (f"{title}.md", [f"# {title}\n\n{text}\n".encode()]) for title, text in NOTES.items()
        ],
        enqueue=False,
    )
    run_pending(source)
    documents = {d.title: d for d in Document.objects.filter(source=source, status="done")}
    assert set(documents) == set(NOTES)
    return documents


def date_documents(documents: dict[str, Document], dates: dict[str, datetime | None]) -> None:
    for title, moment in dates.items():
        Document.objects.filter(pk=documents[title].pk).update(
            published_at=moment, published_source="html" if moment else ""
        )


def ranking(result) -> list[tuple[int, float]]:
    return [(chunk.document_id, chunk.score) for chunk in result.chunks]


def titles(result) -> list[str]:
    return [chunk.document_title for chunk in result.chunks]


def search(client, body: dict):
    return client.post(
        "/api/v1/workspaces/acme/search", data=json.dumps(body), content_type="application/json"
    )


def test_publication_dates_scope_the_search_and_every_hit_carries_its_date(alice, notes):
    date_documents(
        notes,
        {"winch": datetime(2020, 1, 15, 8, tzinfo=UTC), "boom": datetime(2023, 6, 1, tzinfo=UTC)},
    )
    everything = hybrid_search(workspace=alice.workspace, query=QUERY)
    assert set(titles(everything)) == set(NOTES)
    recent = hybrid_search(workspace=alice.workspace, query=QUERY, published_from=date(2023, 1, 1))
    assert titles(recent) == ["boom"]
    assert recent.chunks[0].published_at == datetime(2023, 6, 1, tzinfo=UTC)
    old = hybrid_search(workspace=alice.workspace, query=QUERY, published_to=date(2020, 1, 15))
    assert titles(old) == ["winch"]  # the whole last day counts
    both = hybrid_search(
        workspace=alice.workspace,
        query=QUERY,
        published_from=date(2020, 1, 16),
        published_to=date(2023, 6, 1),
    )
    assert titles(both) == ["boom"]
    # Beside the ingestion dates: both must hold.
    today = datetime.now(UTC).date()
    assert (
        titles(
            hybrid_search(
                workspace=alice.workspace,
                query=QUERY,
                published_from=date(2023, 1, 1),
                ingested_to=today - timedelta(days=2),
            )
        )
        == []
    )

    body = search(alice.client(), {"query": QUERY, "published_to": "2021-12-31"}).json()
    assert [c["document_title"] for c in body["chunks"]] == ["winch"]
    assert body["chunks"][0]["published_at"] == "2020-01-15T08:00:00Z"
    undated = search(alice.client(), {"query": QUERY, "limit": 10}).json()["chunks"]
    assert {c["document_title"]: c["published_at"] for c in undated}["cable"] is None
    inverted = search(
        alice.client(),
        {"query": QUERY, "published_from": "2023-01-02", "published_to": "2023-01-01"},
    )
    assert inverted.status_code == 422
    assert inverted.json()["error"]["message"] == "published_from: must not be after published_to."
    for bad in ({"recency": 1.5}, {"recency": -0.1}, {"published_from": "last year"}):
        assert search(alice.client(), {"query": QUERY, **bad}).status_code == 422, bad

    # Ask: its API and its page, the same filter.
    date_documents(notes, {"rails": datetime(2022, 2, 2, tzinfo=UTC)})
    in_2022 = {"published_from": "2022-01-01", "published_to": "2022-12-31"}
    answer = alice.client().post(
        "/api/v1/workspaces/acme/ask",
        data=json.dumps({"question": QUERY, **in_2022}),
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.content
    passages = answer.json()["passages"]
    assert [(p["document_title"], p["published_at"]) for p in passages] == [
        ("rails", "2022-02-02T00:00:00+00:00")
    ]
    bad = alice.client().post(
        "/api/v1/workspaces/acme/ask",
        data=json.dumps({"question": QUERY, "recency": 2}),
        content_type="application/json",
    )
    assert bad.status_code == 422

    browser = signed_in(alice)
    page = browser.get("/ask/", {"ws": "acme", "q": QUERY, **in_2022}).content.decode()
    assert page.count('class="passage"') == 1
    assert (
        '<time class="passage-date" datetime="2022-02-02T00:00:00+00:00">2022-02-02</time>' in page
    )
    assert 'name="published_from" value="2022-01-01"' in page
    listed = browser.get("/ask/", {"ws": "acme", "q": QUERY}).content.decode()
    assert listed.count('class="passage"') == len(NOTES)
    assert listed.count('class="passage-date"') == 3  # only the dated ones say a date
    # A malformed date on the page is ignored, as the other filters are.
    lenient = browser.get("/ask/", {"ws": "acme", "q": QUERY, "published_to": "someday"})
    assert lenient.status_code == 200
    assert lenient.content.decode().count('class="passage"') == len(NOTES)


def test_recency_off_leaves_the_ranking_exactly_as_it_is_without_dates(alice, notes, settings):
    assert settings.RETRIEVAL_RECENCY_WEIGHT == 0  # off by default
    undated = ranking(hybrid_search(workspace=alice.workspace, query=QUERY, limit=6))
    assert len(undated) == 6
    order = [document_id for document_id, _ in undated]
    by_id = {d.pk: title for title, d in notes.items()}
    now = datetime.now(UTC)
    # The last one is the newest, the first the oldest: a preference would reverse them.
    date_documents(
        notes,
        {by_id[pk]: now - timedelta(days=400 * rank) for rank, pk in enumerate(reversed(order))},
    )
    for recency in (None, 0.0):
        dated = hybrid_search(workspace=alice.workspace, query=QUERY, limit=6, recency=recency)
        assert ranking(dated) == undated, recency
    settings.RETRIEVAL_RECENCY_HALF_LIFE_DAYS = 0  # a weight without a half-life is off too
    assert ranking(hybrid_search(workspace=alice.workspace, query=QUERY, recency=1.0)) == undated

    settings.RETRIEVAL_RECENCY_HALF_LIFE_DAYS = 365
    preferred = hybrid_search(workspace=alice.workspace, query=QUERY, limit=6, recency=1.0)
    newest = order[-1]
    assert [pk for pk, _ in ranking(preferred)].index(newest) < order.index(newest)
    assert "recency" in preferred.timings_ms
    settings.RETRIEVAL_RECENCY_WEIGHT = 1.0  # the setting does what the parameter does
    assert ranking(hybrid_search(workspace=alice.workspace, query=QUERY, limit=6)) == ranking(
        preferred
    )
    # A request may still turn it off.
    off = hybrid_search(workspace=alice.workspace, query=QUERY, limit=6, recency=0)
    assert ranking(off) == undated


def test_prefer_recent_raises_newer_documents_by_their_half_life(settings):
    settings.RETRIEVAL_RECENCY_HALF_LIFE_DAYS = 100
    now = datetime(2025, 1, 1, tzinfo=UTC)
    config = RecencySettings.configured(0.5)
    assert config.factor(now, now) == 1.5
    assert config.factor(now - timedelta(days=100), now) == 1.25
    assert config.factor(now + timedelta(hours=5), now) == 1.5  # a little ahead: today
    assert config.factor(None, now) == 1.0
    signals = ChunkSignals()
    fused = [(1, 0.20, signals), (2, 0.19, signals), (3, 0.19, signals), (4, 0.10, signals)]
    dates = {2: now - timedelta(days=100), 4: now}
    assert [(pk, score) for pk, score, _ in prefer_recent(fused, dates, config, now=now)] == [
        (2, 0.2375),  # 0.19 * 1.25 passes 0.20
        (1, 0.2),
        (3, 0.19),
        (4, 0.15),  # far below: a preference, not a filter
    ]
    off = RecencySettings.configured(0)
    assert prefer_recent(fused, dates, off, now=now) is fused
    with pytest.raises(InvalidInput):
        RecencySettings.configured(float("nan"))


def test_the_document_page_shows_its_date_and_where_it_came_from(alice):
    _, added = do_create_upload_source(
        workspace=alice.workspace,
        files=[("cabin.md", [b"# cabin\n\nx\n"]), ("motor.md", [b"# motor\n\ny\n"])],
        enqueue=False,
    )
    notes = {a.document.path.removesuffix(".md"): a.document for a in added}
    date_documents(notes, {"cabin": datetime(2021, 7, 9, tzinfo=UTC)})
    browser = signed_in(alice)
    page = browser.get(f"/documents/{notes['cabin'].pk}/", {"ws": "acme"}).content.decode()
    assert (
        'Dated <time id="document-date" datetime="2021-07-09T00:00:00+00:00">9 July 2021</time> (HTML metadata)'
        in page
    )
    undated = browser.get(f"/documents/{notes['motor'].pk}/", {"ws": "acme"}).content.decode()
    assert 'id="document-date"' not in undated and "ingested <time" in undated
