"""Rows of an archive written into a new workspace, every id new (format.py, tables.py).

Why new ids everywhere: the archive comes from another instance (or this one), whose ids
name unrelated rows here. Each row gets the next value of its table's own sequence, and
each reference is looked up in the map of the table it points to: a reference to a row
the archive does not hold is refused when the field is required and left empty when it
may be, never kept as it was. Rows are inserted by plain INSERTs of the values the
archive holds (timestamps included: `auto_now` would otherwise date every row today), so
the database's triggers rebuild what is derived (entity search words, Entity.degree).

The caller runs this inside one transaction (knowledge/actions/workspace_archive.py):
an archive that fails on its last line leaves nothing behind. Memory: the id maps (two
int64 arrays per table) and one batch of rows; tables are streamed.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, models
from django.db.models.fields.json import JSONField
from pgvector.django import VectorField

from knowledge.archive.format import ArchiveError, ArchiveReader, table_member
from knowledge.archive.payloads import (
    EVENT,
    PayloadRemapper,
    remap_type_change_conflicts,
    remap_type_change_events,
)
from knowledge.archive.tables import (
    M2M_FIELDS,
    TABLES,
    RowError,
    Table,
    decode_value,
    decode_vector,
    id_list,
    is_user,
    ref_id,
    row_id,
)
from knowledge.models import RelationType
from workspaces.models import Workspace

_BATCH = 1000
_ID_BLOCK = 1000


class IdMap:
    """Old id -> new id of one table. The exporter writes rows by primary key, so the old
    ids of a table ascend and a binary search over two int64 arrays finds them (a fraction
    of a dict's memory); rows out of order are refused."""

    def __init__(self) -> None:
        self.old: array[int] = array("q")
        self.new: array[int] = array("q")

    def add(self, old: int, new: int) -> None:
        if self.old and old <= self.old[-1]:
            raise RowError("id: rows must come in ascending id order, each id once")
        self.old.append(old)
        self.new.append(new)

    def get(self, old: int) -> int | None:
        i = bisect_left(self.old, old)
        if i < len(self.old) and self.old[i] == old:
            return self.new[i]
        return None

    def __len__(self) -> int:
        return len(self.old)


@dataclass
class ImportedRows:
    counts: dict[str, int] = field(default_factory=dict)
    # Embedding dimensions found, for the vector indexes: {"chunk": {384}, "entity": {384}}.
    dimensions: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))


class RowImporter:
    """One archive into one (new, empty) workspace. `blob_names`: the content hashes of
    the blobs the import stores; a document whose blob is not among them keeps its text
    and loses its file reference."""

    def __init__(self, reader: ArchiveReader, workspace: Workspace, blob_names: set[str]) -> None:
        self.reader, self.workspace, self.blob_names = reader, workspace, blob_names
        self.maps: dict[str, IdMap] = defaultdict(IdMap)
        self._ids: dict[str, list[int]] = defaultdict(list)
        self._users: dict[str, int | None] = {}
        self.result = ImportedRows()
        self.remapper = PayloadRemapper(
            self.lookup, fresh_id=self.fresh_id, workspace_id=workspace.pk
        )

    # --- ids ---------------------------------------------------------------------------

    def lookup(self, label: str, old: int) -> int | None:
        return self.maps[label].get(old) if label in self.maps else None

    def fresh_id(self, label: str) -> int:
        """The next id of a table's own sequence (fetched a block at a time)."""
        pool = self._ids[label]
        if not pool:
            table = _model(label)._meta.db_table
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                    [table, _ID_BLOCK],
                )
                pool.extend(sorted((r[0] for r in cursor.fetchall()), reverse=True))
        return pool.pop()

    def _user(self, value: object) -> int | None:
        """Users travel by name: the same name here, or nobody."""
        if not isinstance(value, str) or not value or len(value) > 150:
            return None
        if value not in self._users:
            user = get_user_model().objects.filter(username=value).values_list("pk", flat=True)
            self._users[value] = user.first()
        return self._users[value]

    # --- tables ------------------------------------------------------------------------

    def run(self) -> ImportedRows:
        for table in TABLES:
            self.result.counts[table.label] = self._table(table)
        self._event_payloads()
        return self.result

    def _table(self, table: Table) -> int:
        fields = table.fields()
        # Fields left out of the archive start from their defaults (NOT NULL columns whose
        # defaults live in Django, not in the database).
        defaults = [
            f for f in table.model._meta.concrete_fields
            if f.name in table.skip and not getattr(f, "generated", False)
        ]  # fmt: skip
        default_values = [f.get_db_prep_save(f.get_default(), connection) for f in defaults]
        columns = ["workspace_id", *(f.column for f in fields), *(f.column for f in defaults)]
        sql = (
            f'INSERT INTO "{table.model._meta.db_table}" '  # noqa: S608 (names from models)
            f"({', '.join(f'{chr(34)}{c}{chr(34)}' for c in columns)}) "
            f"VALUES ({', '.join(['%s'] * len(columns))})"
        )
        member = table_member(table.label)
        batch: list[list[Any]] = []
        self_refs: list[tuple[str, int, int]] = []  # (column, new id, old id referred to)
        m2m: list[tuple[int, dict[str, Any]]] = []
        count = 0
        for number, row in self.reader.rows(table.label):
            try:
                values = self._row(table, fields, row, self_refs)
            except RowError as exc:
                raise ArchiveError(str(exc), member=member, line=number) from None
            batch.append([self.workspace.pk, *values, *default_values])
            if table.label in M2M_FIELDS:
                m2m.append((values[0], row))
            count += 1
            if len(batch) >= _BATCH:
                self._insert(sql, batch, member)
                batch = []
        if batch:
            self._insert(sql, batch, member)
        self._set_self_refs(table, self_refs, member)
        if m2m:
            self._m2m(table, m2m, member)
        return count

    def _insert(self, sql: str, batch: list[list[Any]], member: str) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.executemany(sql, batch)
        except DatabaseError as exc:
            message = f"rows the database refuses ({_first_line(exc)})"
            raise ArchiveError(message, member=member) from exc

    def _row(
        self,
        table: Table,
        fields: list[models.Field[Any, Any]],
        row: dict[str, Any],
        self_refs: list[tuple[str, int, int]],
    ) -> list[Any]:
        label = table.label
        new_id = self.fresh_id(label)
        self.maps[label].add(row_id(row), new_id)
        values: dict[str, Any] = {}
        for f in fields:
            if f.primary_key:
                values[f.attname] = new_id
            elif is_user(f):
                values[f.attname] = self._user(row.get(f.name))
            elif f.is_relation:
                values[f.attname] = self._reference(f, row, new_id, self_refs)
            elif f.name in table.rewritten:
                values[f.attname] = self._rewritten(label, f.name, row)
            elif isinstance(f, VectorField):
                values[f.attname] = decode_vector(row.get(f.name), row.get("embedding_dim"))
            else:
                values[f.attname] = decode_value(f, _given(f, row))
        if "embedding" in values:
            self._vector_columns(label, values)
        return [f.get_db_prep_save(values[f.attname], connection) for f in fields]

    def _reference(
        self,
        f: models.Field[Any, Any],
        row: dict[str, Any],
        new_id: int,
        self_refs: list[tuple[str, int, int]],
    ) -> int | None:
        old = ref_id(row, f.attname)
        target = f.related_model._meta.label  # type: ignore[union-attr]
        if old is not None and target == f.model._meta.label:
            self_refs.append((str(f.column), new_id, old))  # set once the whole table is in
            return None
        new = self.lookup(target, old) if old is not None else None
        if new is None and not f.null:
            missing = "missing" if old is None else f"{old}, a row the archive does not hold"
            raise RowError(f"{f.attname}: required reference {missing}")
        return new

    def _rewritten(self, label: str, name: str, row: dict[str, Any]) -> Any:
        value = row.get(name)
        if name == "source_ids":  # Entity: the sources mentioning it
            found = (self.lookup("ingest.Source", old) for old in id_list(value, name))
            return sorted({new for new in found if new is not None})
        if name == "blob":  # Document: the stored file, under the new workspace
            if not isinstance(value, str) or not value:
                return ""
            sha256 = value.rsplit("/", 1)[-1]
            if sha256 not in self.blob_names:
                return ""
            return blob_target(self.workspace, sha256)
        if name == "payload":  # CurationEvent: rewritten once every table is in
            return {}
        if name == "events":  # TypeChange
            return remap_type_change_events(self.remapper, value)
        if name == "conflicts":
            kind = row.get("kind")
            return remap_type_change_conflicts(self.remapper, str(kind), value)
        raise RowError(f"{name}: no rewrite known")  # pragma: no cover (tables.py lists them)

    def _vector_columns(self, label: str, values: dict[str, Any]) -> None:
        """A row without its vector (an archive made with --no-vectors) names no model."""
        if values["embedding"] is None:
            values["embedding_model"], values["embedding_dim"] = "", None
            return
        dim = len(values["embedding"])
        values["embedding_dim"] = dim
        self.result.dimensions[label].add(dim)

    def _set_self_refs(self, table: Table, refs: list[tuple[str, int, int]], member: str) -> None:
        by_column: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for column, new_id, old in refs:
            target = self.maps[table.label].get(old)
            if target is not None:
                by_column[column].append((target, new_id))
        db_table = table.model._meta.db_table
        for column, pairs in by_column.items():
            sql = f'UPDATE "{db_table}" SET "{column}" = %s WHERE id = %s'  # noqa: S608
            self._insert(sql, [list(p) for p in pairs], member)

    def _m2m(self, table: Table, rows: list[tuple[int, dict[str, Any]]], member: str) -> None:
        """RelationType's domain and range: lists of entity type ids on the row."""
        for name in M2M_FIELDS[table.label]:
            through = getattr(RelationType, name).through
            links = []
            for new_id, row in rows:
                try:
                    olds = id_list(row.get(f"{name}_ids"), f"{name}_ids")
                except RowError as exc:
                    raise ArchiveError(str(exc), member=member) from None
                for old in sorted(set(olds)):
                    entity_type = self.lookup("knowledge.EntityType", old)
                    if entity_type is not None:
                        links.append(through(relationtype_id=new_id, entitytype_id=entity_type))
            through.objects.bulk_create(links, batch_size=_BATCH)

    def _event_payloads(self) -> None:
        """Second pass over the events: their payloads name rows of every table (aliases,
        rules, later events), all mapped by now."""
        member = table_member(EVENT)
        sql = 'UPDATE "knowledge_curationevent" SET payload = %s WHERE id = %s'
        payload_field = JSONField()
        batch: list[list[Any]] = []
        for _number, row in self.reader.rows(EVENT):
            new_id = self.maps[EVENT].get(row_id(row))
            if new_id is None:  # pragma: no cover (the first pass mapped every row)
                continue
            payload = self.remapper.remap(str(row.get("action", "")), row.get("payload"))
            batch.append([payload_field.get_db_prep_save(payload, connection), new_id])
            if len(batch) >= _BATCH:
                self._insert(sql, batch, member)
                batch = []
        if batch:
            self._insert(sql, batch, member)


def _given(f: models.Field[Any, Any], row: dict[str, Any]) -> Any:
    """The row's value of a plain field; a field the archive lacks (an older exporter)
    takes its default."""
    if f.name in row:
        return row[f.name]
    if f.has_default():
        return f.get_default()
    if f.null:
        return None
    raise RowError(f"{f.name}: missing")


def _model(label: str) -> type[models.Model]:
    for table in TABLES:
        if table.label == label:
            return table.model
    raise LookupError(label)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def blob_target(workspace: Workspace, sha256: str) -> str:
    """Where an imported blob lives, relative to MEDIA_ROOT (as ingest/blobs.py names it)."""
    return f"blobs/{workspace.pk}/{sha256[:2]}/{sha256}"
