"""Writes of the workspaces app: each a typed, keyword-only function and one transaction."""
