"""Writes of the ingest app: each a typed, keyword-only function."""
