"""The pipeline stages the knowledge app contributes to ingestion (INGEST_PIPELINE_STAGES
in config/settings/base.py; its other seams are in knowledge/hooks.py).

`extract` takes an embedded document through extraction (with an LLM, its group step sends
the windows of a whole group of documents out together) and reports what it extracted and
what failed: the pipeline moves the documents (ingest/actions/pipeline.py, `StageReport`);
`consolidate` puts what extraction left in doubt to the LLM (knowledge/actions/review.py).
"""

from __future__ import annotations

from ingest.models import Document
from ingest.stages import group_prepared
from knowledge.actions.extraction.documents import extract_document, extract_group
from knowledge.actions.review import do_review_documents
from system.llm.availability import extraction_uses_llm

# The group step sends a whole group's windows to the LLM concurrently; the offline
# extractor takes windows one by one either way, so each document goes on alone (extracted
# while the group's next documents are still being embedded: ingest/embedding_lane.py).
extract = group_prepared(extract_group, wanted=extraction_uses_llm)(extract_document)


def consolidate(*, document: Document) -> None:
    """After extraction: the LLM's review of doubtful pairs among the document's entities
    and summaries of descriptions grown long (nothing without an LLM)."""
    do_review_documents(documents=[document])
