"""A workspace as one archive file, and back: `manage.py export_workspace` /
`import_workspace` and the admin-only API (knowledge/api/archive.py).

    format.py   the file: a zip holding manifest.json (format name and version, counts and
                a SHA-256 per member), one NDJSON member per table under tables/, and the
                uploaded files under blobs/<sha256>; the reader treats every byte as
                hostile (member names, sizes, line lengths, JSON types, checksums)
    tables.py   which tables travel, in which order, and how each field is written and
                read back (foreign keys as the exporting instance's ids, users by name,
                vectors as base64 float32)
    payloads.py the ids inside curation event payloads, rewritten to the new rows' ids so
                undo keeps working after an import
    export.py   the export: one streaming pass per table, constant memory
    importer.py the rows written into a new workspace, every id new and every reference
                (payloads, rules, blobs) rewritten; run inside the caller's transaction

The import as a whole (checks first, one transaction, blobs staged then moved) is a write:
knowledge/actions/workspace_archive.py.
What is left out and rebuilt instead: entity search words (EntityWord, WordTypoKey) and
Entity.degree (database triggers rebuild them as rows arrive), the vector indexes (ensured
per dimension), memberships and API tokens (people and secrets of the other instance),
the MCP call log, the community map (`manage.py communities`) and the Neo4j projection
(`manage.py sync_graph`).
"""
