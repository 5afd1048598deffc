"""Sources, documents, chunks, parsers, embeddings, crawler (the Ingestion issue fills it).

Depends only on `workspaces` (and `system`).
"""
