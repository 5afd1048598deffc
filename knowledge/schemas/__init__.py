"""The API's request and response schemas, one module per subject: `types` (the schema
registry), `extraction`, `curation`, `graph` (reads of entities, relations and graphs),
`search`. Entity fields every answer shares are declared once, in `entity.py`."""
