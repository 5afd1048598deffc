"""Pipeline stages the knowledge app contributes to ingestion (see INGEST_PIPELINE_STAGES).

`extract` is where entity and relation extraction plugs in (the Extraction issue). Until it
lands this stage is a deliberate no-op: documents go from embedded to done, and nothing
about the graph is claimed.
"""

from __future__ import annotations

from ingest.models import Document


def extract(*, document: Document) -> None:
    """No-op until extraction exists; kept so the pipeline's order is visible in settings."""
    return
