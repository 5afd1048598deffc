"""Tenancy: workspaces, memberships and roles, API tokens, scoping helpers, first run.

Every row of every other app belongs to a workspace; this app holds the pattern they use
(`WorkspaceScopedModel`, `get_object_for_workspace`) and the domain errors that map to HTTP.
"""
