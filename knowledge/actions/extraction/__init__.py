"""Extract entities and relations from documents and record them with their evidence.

The flow for a set of documents of one source (entry points in `documents.py`):

1. Windows are built from each document's chunks (knowledge/extraction/windows.py).
2. `runs.ensure_runs` finds the cached `ExtractionRun` of every window and extracts only
   the missing ones on a thread pool, reserving each window's tokens against the source's
   budget (`budget.py`) before sending it.
3. `materialize.py` turns each document's runs into entities (through resolution,
   knowledge/actions/resolution.py), relations, `Mention` and `RelationEvidence` rows, one
   transaction per document, while the next windows are still in flight.
4. Derived fields are recomputed for what was touched, through the write funnel
   (knowledge/actions/evidence.py).

Before 1, a source with a `topic` leaves out the documents not about it (`relevance.py`,
deciding through knowledge/extraction/relevance.py): kept, not extracted. In 2, a known-only
source sends no window that names no known entity or alias, and the LLM extractor sends
none once the workspace's monthly LLM budget is spent (`monthly_budget.py`): the documents
left with windows unsent wait, and go on when the budget is raised or the month turns.

`estimate.py` says what a source would cost before any of this runs.
"""
