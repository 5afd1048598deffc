"""Reads of the knowledge app, one module per subject, each function scoped to the workspace
it is given first: `schema`, `extraction`, `curation`, `communities`, `entities`,
`relations`, `graph` (traversals through the backend), `bulk_graph` (the explorer's large
loads) and `params` (bounded list parameters). Callers import the function from its module.
"""
