"""The graph: schema registry, entities, relations, evidence, extraction, consolidation,
backends, retrieval (later issues fill it). Builds on `ingest`.
"""
