"""Pipeline hooks the knowledge app contributes to ingestion (see INGEST_PIPELINE_STAGES
and INGEST_DELETION_HOOKS in config/settings/base.py).

`extract` takes an embedded document through extraction (its group step sends the windows
of a whole group of documents out together); `forget_chunks` takes back the evidence of
chunks before the ingest app deletes them.
"""

from __future__ import annotations

from ingest.stages import group_prepared
from knowledge.actions.extraction import do_forget_chunks, extract_document, extract_group

extract = group_prepared(extract_group)(extract_document)


def forget_chunks(*, chunk_ids: list[int]) -> None:
    do_forget_chunks(chunk_ids=chunk_ids)
