"""The fields every answer about an entity carries, declared once.

Curation's `EntityOut`, the entity list's `EntityListOut` and search's `SearchEntityOut`
extend it with what their answers add. It is never a response itself, so it adds no
component to the OpenAPI document.
"""

from __future__ import annotations

from ninja import Schema


class EntityBase(Schema):
    id: int
    name: str
    type: str
    description: str
    aliases: list[str]
    mention_count: int
