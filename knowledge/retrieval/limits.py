"""The bounds of a search request and of the entities it returns.

Apart from the stages because two sides read them: the search checks its arguments
against them, and the API schema (knowledge/retrieval_schemas.py) states the same bounds
to clients. Tuning constants of one stage live at the top of that stage's module.
"""

from __future__ import annotations

MAX_QUERY_CHARS = 1000
MAX_LIMIT = 50
MAX_FILTER_ITEMS = 50
# Entities in a result; also the name-vector candidates (more could never be returned).
ENTITY_LIMIT = 20
