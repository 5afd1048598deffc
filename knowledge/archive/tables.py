"""Which tables an archive holds, in the order they are imported (a row's references are
always imported before it), and how each field is written and read back.

Every row is written with its own id and its references as the exporting instance's ids
(`<field>_id`); the import gives each row a new id and rewrites the references through
the id maps. References to the row's own table (an entity merged into another, a
duplicate document, the event that undid an event) are set in a second pass, once every
row of the table has its id. Users travel by username; vectors as base64 of little-endian
float32 (or not at all: `--no-vectors`).

Read back, every value is checked against its field: JSON type, length, choices, null.
Nothing is evaluated, nothing unpickled.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, TypeGuard

import numpy as np
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from pgvector.django import VectorField

from ingest.models import Chunk, CrawlPage, Document, DocumentBlock, Source
from knowledge.models import (
    Alias,
    CommunitySummary,
    CurationEvent,
    CurationRule,
    Entity,
    EntityType,
    ExtractionRun,
    LlmCall,
    Mention,
    MergeSuggestion,
    Relation,
    RelationEvidence,
    RelationNote,
    RelationRule,
    RelationType,
    SourceExtraction,
)
from knowledge.models.schema import TypeChange
from workspaces.models import MAX_ID

# The largest vector accepted (pgvector's own limit for an indexable vector is lower).
MAX_VECTOR_DIM = 16_000


@dataclass(frozen=True)
class Table:
    model: type[models.Model]
    # Nullable references to the same table, set in a second pass.
    self_refs: tuple[str, ...] = ()
    # Fields left out: derived by the database, or meaningless in another instance.
    skip: tuple[str, ...] = ()
    # Fields rewritten by the import engine itself (not copied).
    rewritten: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.model._meta.label

    def fields(self) -> list[models.Field[Any, Any]]:
        """The concrete fields written to the archive, id first."""
        out: list[models.Field[Any, Any]] = []
        for f in self.model._meta.concrete_fields:
            if f.name in ("workspace", *self.skip) or getattr(f, "generated", False):
                continue
            out.append(f)
        return out


# Import order. Left out: EntityWord and WordTypoKey (rebuilt by triggers), memberships,
# API tokens and the MCP call log (people and secrets of the other instance).
TABLES: tuple[Table, ...] = (
    Table(EntityType),
    Table(RelationType),
    Table(Source),
    Table(Document, self_refs=("duplicate_of",), rewritten=("blob",)),
    Table(Chunk, skip=("retrieved_count", "last_retrieved_at")),
    Table(DocumentBlock),
    Table(CrawlPage),
    Table(ExtractionRun),
    Table(LlmCall),
    Table(SourceExtraction, skip=("reservations",)),
    Table(Entity, self_refs=("merged_into",), skip=("degree",), rewritten=("source_ids",)),
    Table(Relation, self_refs=("merged_into",)),
    Table(Mention),
    Table(RelationEvidence),
    Table(CurationEvent, self_refs=("undone_by",), rewritten=("payload",)),
    Table(Alias),
    Table(CurationRule),
    Table(RelationRule),
    Table(RelationNote),
    Table(MergeSuggestion),
    Table(TypeChange, rewritten=("events", "conflicts")),
    Table(CommunitySummary),
)
TABLES_BY_LABEL = {table.label: table for table in TABLES}
# Many-to-many links exported as lists of ids on the row (RelationType's domain and range).
M2M_FIELDS = {"knowledge.RelationType": ("domain", "range")}


def is_user(f: models.Field[Any, Any]) -> bool:
    return bool(f.is_relation and f.related_model and f.related_model._meta.label == "auth.User")


def key_of(f: models.Field[Any, Any]) -> str:
    """The row key: `<name>_id` for a reference to another archived row, else the name."""
    return f.name if is_user(f) or not f.is_relation else f.attname


# --- Writing -------------------------------------------------------------------------------


def encode_vector(value: Any) -> str | None:
    if value is None:
        return None
    return base64.b64encode(np.asarray(value, dtype="<f4").tobytes()).decode("ascii")


def encode_value(f: models.Field[Any, Any], value: Any, *, vectors: bool) -> Any:
    if isinstance(f, VectorField):
        return encode_vector(value) if vectors else None
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


# --- Reading -------------------------------------------------------------------------------


class RowError(ValueError):
    """One field of one row is not what its field allows."""


def decode_vector(value: object, dim: object) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_VECTOR_DIM * 8:
        raise RowError("vector: expected base64 text")
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        raise RowError("vector: invalid base64") from None
    if len(raw) % 4 or not raw:
        raise RowError("vector: not a whole number of float32 values")
    array = np.frombuffer(raw, dtype="<f4")
    if dim is not None and array.size != dim:
        raise RowError(f"vector: {array.size} values, embedding_dim says {dim}")
    if not np.all(np.isfinite(array)):
        raise RowError("vector: values must be finite")
    return array.astype(float).tolist()


_TEXT = (models.CharField, models.TextField)
_INT = (models.IntegerField, models.BigIntegerField, models.SmallIntegerField)  # + positive


def _checked_type(f: models.Field[Any, Any], value: Any) -> Any:
    if isinstance(f, models.BooleanField):
        if not isinstance(value, bool):
            raise RowError(f"{f.name}: expected true or false")
        return value
    if isinstance(f, _TEXT):
        if not isinstance(value, str):
            raise RowError(f"{f.name}: expected text")
        if "\x00" in value:
            raise RowError(f"{f.name}: NUL characters are not allowed")
        return value
    if isinstance(f, models.FloatField):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RowError(f"{f.name}: expected a number")
        return float(value)
    if isinstance(f, _INT):
        if isinstance(value, bool) or not isinstance(value, int):
            raise RowError(f"{f.name}: expected an integer")
        return value
    if isinstance(f, models.DecimalField):
        try:
            return Decimal(str(value)) if isinstance(value, str | int) else _no(f, "a decimal")
        except InvalidOperation:
            raise RowError(f"{f.name}: expected a decimal") from None
    if isinstance(f, models.DateTimeField):
        if not isinstance(value, str):
            raise RowError(f"{f.name}: expected an ISO date and time")
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            raise RowError(f"{f.name}: expected an ISO date and time") from None
        # The exporter writes aware times; a naive one is read as UTC, never as local time.
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)
    if isinstance(f, ArrayField):
        if not isinstance(value, list):
            raise RowError(f"{f.name}: expected a list")
        return [_checked_type(f.base_field, item) for item in value]
    if isinstance(f, models.JSONField):
        return value
    raise RowError(f"{f.name}: field type {type(f).__name__} is not importable")


def _no(f: models.Field[Any, Any], what: str) -> Any:
    raise RowError(f"{f.name}: expected {what}")


def decode_value(f: models.Field[Any, Any], value: Any) -> Any:
    """The value of a plain (non-reference) field, checked."""
    if value is None:
        if not f.null:
            raise RowError(f"{f.name}: may not be null")
        return None
    checked = _checked_type(f, value)
    if f.choices and not isinstance(f, ArrayField):
        allowed = {choice[0] for choice in f.flatchoices}
        if checked not in allowed:
            raise RowError(f"{f.name}: {str(checked)[:50]!r} is not one of its choices")
    try:
        f.run_validators(checked)
    except ValidationError as exc:
        raise RowError(f"{f.name}: {'; '.join(exc.messages)}") from None
    return checked


def _is_id(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_ID


def row_id(row: dict[str, Any]) -> int:
    value = row.get("id")
    if not _is_id(value):
        raise RowError("id: expected a positive integer")
    return value


def ref_id(row: dict[str, Any], key: str) -> int | None:
    value = row.get(key)
    if value is None:
        return None
    if not _is_id(value):
        raise RowError(f"{key}: expected a positive integer or null")
    return value


def id_list(value: object, key: str) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(_is_id(v) for v in value):
        raise RowError(f"{key}: expected a list of ids")
    return value


Lookup = Callable[[str, int], int | None]
