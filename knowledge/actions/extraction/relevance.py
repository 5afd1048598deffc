"""The relevance filter's reads around its decision (knowledge/extraction/relevance.py):
the source's topic, its embedding (the model the chunks were embedded with, remembered
per process like a search query's), and each document's first content chunks' vectors.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from ingest.models import Chunk, Document, Source
from knowledge.extraction.relevance import TOPIC_CHUNKS, Relevance, judge_relevance
from knowledge.retrieval.query_embedding import embed_query


def source_topic(source: Source) -> str:
    """The source's `topic` setting ("" when it has none)."""
    topic = (source.settings or {}).get("topic")
    return topic.strip() if isinstance(topic, str) else ""


def judge_documents(source: Source, documents: list[Document]) -> dict[int, Relevance]:
    """Each document's relevance to its source's topic ({} when the source has none)."""
    topic = source_topic(source)
    if not topic or not documents:
        return {}
    warnings: list[str] = []
    topic_vector = embed_query(topic, warnings)
    vectors: dict[int, list[list[float]]] = {d.pk: [] for d in documents}
    if topic_vector is not None:
        rows = (
            Chunk.objects.filter(
                document_id__in=list(vectors),
                boilerplate=False,
                embedding__isnull=False,
                embedding_model=topic_vector.model,
            )
            .annotate(
                place=Window(RowNumber(), partition_by=[F("document_id")], order_by=F("ordinal"))
            )
            .filter(place__lte=TOPIC_CHUNKS)
            .order_by("document_id", "ordinal")
            .values_list("document_id", "embedding")
        )
        for document_id, embedding in rows:
            if embedding is not None:
                vectors[document_id].append(list(embedding))
    threshold = settings.CRAWL_TOPIC_MIN_SIMILARITY
    values = topic_vector.values if topic_vector is not None else None
    return {
        pk: judge_relevance(chunks, values, threshold=threshold) for pk, chunks in vectors.items()
    }
