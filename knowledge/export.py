"""Export of a workspace's active graph as JSON, GraphML, CSV or Cypher, streamed.

The API (`GET export`) and `manage.py export` share these generators. Rows come from
server-side cursors (`.iterator(chunk_size=...)`) and leave as text pieces of about
`PIECE_CHARS`, so memory stays flat whatever the size of the graph. Names, descriptions
and keywords come from documents and the web, so every format treats them as hostile:
JSON and CSV through their standard writers, GraphML through XML escaping with characters
XML 1.0 forbids replaced, Cypher as string literals in which only printable ASCII appears
unescaped (a quote or backslash can never end the literal early) and with labels and
relationship types reduced to letters, digits and underscores.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from xml.sax.saxutils import escape, quoteattr

from django.utils import timezone

from knowledge.models import Entity, EntityState, Relation
from workspaces.errors import InvalidInput
from workspaces.models import Workspace

ExportFormat = Literal["json", "graphml", "csv", "cypher"]
CsvPart = Literal["entities", "relations"]
FORMATS: tuple[ExportFormat, ...] = ("json", "graphml", "csv", "cypher")
CSV_PARTS: tuple[CsvPart, ...] = ("entities", "relations")

CHUNK_SIZE = 2000  # rows per server-side cursor fetch
PIECE_CHARS = 64 * 1024  # text handed to the response (or file) at a time

ENTITY_COLUMNS = (
    "id",
    "name",
    "type",
    "description",
    "aliases",
    "mention_count",
    "community",
    "source_ids",
    "first_seen_at",
    "last_seen_at",
)
RELATION_COLUMNS = (
    "id",
    "source",
    "target",
    "type",
    "description",
    "keywords",
    "weight",
    "evidence_count",
)


@dataclass(frozen=True, slots=True)
class Export:
    """What an export produces: its media type, a file name, and the text, piece by piece
    (consuming `pieces` runs the queries)."""

    content_type: str
    filename: str
    pieces: Iterator[str]


def export_graph(
    workspace: Workspace, *, fmt: str, part: str | None = None, chunk_size: int = CHUNK_SIZE
) -> Export:
    """The workspace's active entities and the active relations between them, in `fmt`.
    CSV is one table per request: `part` entities or relations."""
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    base = f"graphloom-{workspace.slug}-{stamp}"
    if fmt == "json":
        return Export("application/json", f"{base}.json", _pieces(_json(workspace, chunk_size)))
    if fmt == "graphml":
        return Export(
            "application/graphml+xml; charset=utf-8",
            f"{base}.graphml",
            _pieces(_graphml(workspace, chunk_size)),
        )
    if fmt == "csv":
        if part not in CSV_PARTS:
            raise InvalidInput("part: entities or relations (CSV is one table per export).")
        rows = (
            _entity_rows(workspace, chunk_size)
            if part == "entities"
            else _relation_rows(workspace, chunk_size)
        )
        columns = ENTITY_COLUMNS if part == "entities" else RELATION_COLUMNS
        return Export("text/csv; charset=utf-8", f"{base}-{part}.csv", _pieces(_csv(columns, rows)))
    if fmt == "cypher":
        return Export(
            "text/plain; charset=utf-8",
            f"{base}.cypher",
            _pieces(_cypher(workspace, chunk_size)),
        )
    raise InvalidInput(f"format: one of {', '.join(FORMATS)}.")


def _pieces(lines: Iterable[str]) -> Iterator[str]:
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size >= PIECE_CHARS:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)


# --- rows -----------------------------------------------------------------------------------


def _entity_rows(workspace: Workspace, chunk_size: int) -> Iterator[dict[str, Any]]:
    rows = (
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .order_by("pk")
        .values_list(
            "pk",
            "name",
            "type__name",
            "description",
            "aliases",
            "mention_count",
            "community",
            "source_ids",
            "first_seen_at",
            "last_seen_at",
        )
    )
    for row in rows.iterator(chunk_size=chunk_size):
        record = dict(zip(ENTITY_COLUMNS, row, strict=True))
        record["aliases"] = [str(a) for a in (record["aliases"] or [])]
        record["source_ids"] = list(record["source_ids"] or [])
        yield record


def _relation_rows(workspace: Workspace, chunk_size: int) -> Iterator[dict[str, Any]]:
    # Both ends active: an edge never points at an entity the export left out.
    rows = (
        Relation.objects.for_workspace(workspace)
        .filter(
            state=EntityState.ACTIVE,
            source__state=EntityState.ACTIVE,
            target__state=EntityState.ACTIVE,
        )
        .order_by("pk")
        .values_list(
            "pk",
            "source_id",
            "target_id",
            "type__name",
            "description",
            "keywords",
            "weight",
            "evidence_count",
        )
    )
    for row in rows.iterator(chunk_size=chunk_size):
        record = dict(zip(RELATION_COLUMNS, row, strict=True))
        record["keywords"] = [str(k) for k in (record["keywords"] or [])]
        record["weight"] = _finite(record["weight"])
        yield record


def _finite(value: Any) -> float:
    number = float(value or 0.0)
    return number if math.isfinite(number) else 0.0


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# --- JSON -----------------------------------------------------------------------------------


def _json(workspace: Workspace, chunk_size: int) -> Iterator[str]:
    """One JSON document: {"workspace", "exported_at", "entities": [...], "relations":
    [...]}, one row per line so a reader can also stream it."""
    yield (
        '{"format": "graphloom", "version": 1, '
        f'"workspace": {json.dumps(workspace.slug)}, '
        f'"exported_at": {json.dumps(timezone.now().isoformat())}'
    )
    for key, rows in (
        ("entities", _entity_rows(workspace, chunk_size)),
        ("relations", _relation_rows(workspace, chunk_size)),
    ):
        yield f', "{key}": ['
        separator = "\n"
        for row in rows:
            for field in ("first_seen_at", "last_seen_at"):
                if field in row:
                    row[field] = _iso(row[field])
            yield separator + json.dumps(row, ensure_ascii=False)
            separator = ",\n"
        yield "\n]"
    yield "}\n"


# --- GraphML --------------------------------------------------------------------------------

# Characters XML 1.0 allows; anything else (most C0 controls, unpaired surrogates, U+FFFE,
# U+FFFF) cannot appear even as a character reference, so it becomes U+FFFD.
_XML_INVALID = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_NODE_KEYS = (
    ("v_name", "name", "string"),
    ("v_type", "type", "string"),
    ("v_description", "description", "string"),
    ("v_aliases", "aliases", "string"),
    ("v_mention_count", "mention_count", "int"),
    ("v_community", "community", "int"),
    ("v_source_ids", "source_ids", "string"),
    ("v_first_seen_at", "first_seen_at", "string"),
    ("v_last_seen_at", "last_seen_at", "string"),
)
_EDGE_KEYS = (
    ("e_type", "type", "string"),
    ("e_weight", "weight", "double"),
    ("e_description", "description", "string"),
    ("e_keywords", "keywords", "string"),
    ("e_evidence_count", "evidence_count", "int"),
)


def xml_text(value: object) -> str:
    """Text safe inside an XML element: escaped, forbidden characters replaced, and
    carriage returns as references (a parser would otherwise turn them into newlines)."""
    return escape(_XML_INVALID.sub("\ufffd", str(value)), {"\r": "&#13;"})


def _graphml_value(field: str, value: Any) -> str | None:
    if value is None:
        return None
    if field in {"aliases", "source_ids", "keywords"}:
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _graphml(workspace: Workspace, chunk_size: int) -> Iterator[str]:
    yield (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
        'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
    )
    for scope, keys in (("node", _NODE_KEYS), ("edge", _EDGE_KEYS)):
        for key_id, name, kind in keys:
            yield (f'<key id="{key_id}" for="{scope}" attr.name="{name}" attr.type="{kind}"/>\n')
    yield f'<graph id={quoteattr(workspace.slug)} edgedefault="directed">\n'
    for row in _entity_rows(workspace, chunk_size):
        data = "".join(
            f'<data key="{key_id}">{xml_text(text)}</data>'
            for key_id, name, _ in _NODE_KEYS
            if (text := _graphml_value(name, row[name])) is not None
        )
        yield f'<node id="n{int(row["id"])}">{data}</node>\n'
    for row in _relation_rows(workspace, chunk_size):
        data = "".join(
            f'<data key="{key_id}">{xml_text(text)}</data>'
            for key_id, name, _ in _EDGE_KEYS
            if (text := _graphml_value(name, row[name])) is not None
        )
        yield (
            f'<edge id="e{int(row["id"])}" source="n{int(row["source"])}" '
            f'target="n{int(row["target"])}">{data}</edge>\n'
        )
    yield "</graph>\n</graphml>\n"


# --- CSV ------------------------------------------------------------------------------------


class _Line:
    """A file-like object whose write returns what it was given: csv.writer then formats
    one row at a time without a buffer that grows."""

    def write(self, value: str) -> str:
        return value


def _csv_cell(value: Any) -> Any:
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, datetime):
        return value.isoformat()
    return "" if value is None else value


def _csv(columns: tuple[str, ...], rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """RFC 4180 (quotes doubled, fields with separators, quotes or line breaks quoted);
    list cells are JSON. Values are written exactly: a spreadsheet user should import
    the file as text rather than let cells starting with = run as formulas."""
    writer = csv.writer(_Line())
    yield writer.writerow(columns)
    for row in rows:
        yield writer.writerow([_csv_cell(row[column]) for column in columns])


# --- Cypher ---------------------------------------------------------------------------------

_PRINTABLE_SAFE = frozenset(chr(c) for c in range(0x20, 0x7F)) - {"\\", "'", '"', "`"}


def cypher_string(value: object) -> str:
    """A Cypher string literal for any text: backslash, quotes and backtick escaped, and
    every character outside printable ASCII written as \\uXXXX (or \\UXXXXXXXX), so the
    literal's own characters can never end it or start a statement."""
    out = ["'"]
    for char in str(value):
        if char in _PRINTABLE_SAFE:
            out.append(char)
        elif char in "\\'\"":
            out.append("\\" + char)
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append("'")
    return "".join(out)


def cypher_identifier(value: str, *, upper: bool) -> str | None:
    """A label (CamelCase) or relationship type (UPPER_SNAKE) made only of ASCII letters,
    digits and underscores, or None when nothing usable is left."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", value) if w]
    if not words:
        return None
    name = "_".join(w.upper() for w in words) if upper else "".join(w.capitalize() for w in words)
    return name if name[0].isalpha() else None


def _cypher_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(_finite(value))
    if isinstance(value, datetime):
        return cypher_string(value.isoformat())
    if isinstance(value, list):
        return "[" + ", ".join(_cypher_value(v) for v in value) + "]"
    return cypher_string(value)


def _cypher(workspace: Workspace, chunk_size: int) -> Iterator[str]:
    """Idempotent statements for cypher-shell: MERGE nodes (:Entity {workspace, id}) and
    relationships by id, then SET the properties; running it twice changes nothing."""
    ws = cypher_string(workspace.slug)
    yield "// Graphloom export: active entities and relations of one workspace.\n"
    yield (
        "CREATE INDEX graphloom_entity_id IF NOT EXISTS FOR (n:Entity) ON (n.workspace, n.id);\n"
    )
    for row in _entity_rows(workspace, chunk_size):
        properties = ", ".join(
            f"n.{name} = {_cypher_value(row[name])}"
            for name in ENTITY_COLUMNS
            if name != "id" and row[name] is not None
        )
        label = cypher_identifier(str(row["type"]), upper=False)
        extra = f", n:{label}" if label and label != "Entity" else ""
        yield (
            f"MERGE (n:Entity {{workspace: {ws}, id: {int(row['id'])}}}) SET {properties}{extra};\n"
        )
    for row in _relation_rows(workspace, chunk_size):
        kind = cypher_identifier(str(row["type"]), upper=True) or "RELATED_TO"
        properties = ", ".join(
            f"r.{name} = {_cypher_value(row[name])}"
            for name in ("type", "weight", "description", "keywords", "evidence_count")
        )
        yield (
            f"MATCH (a:Entity {{workspace: {ws}, id: {int(row['source'])}}}), "
            f"(b:Entity {{workspace: {ws}, id: {int(row['target'])}}}) "
            f"MERGE (a)-[r:{kind} {{id: {int(row['id'])}}}]->(b) SET {properties};\n"
        )
