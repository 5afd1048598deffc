"""JSON and JSONL: one `path: value` line per value, so every value is findable by its path.

Search and the graph extractor work on text. Pretty-printed JSON spreads one fact over braces
and lines; `orders[3].customer.name: Ada` keeps the value next to what it means. Nesting is
walked with an explicit stack, so a hostile file cannot exhaust the Python stack here.
"""

from __future__ import annotations

import json
from typing import Any

from ingest.parsers.base import ParsedDocument, ParseError, ParserLimits
from ingest.parsers.text import decode_text, decoding_warning, filename_stem, short_title

MAX_DEPTH = 64
_TITLE_KEYS = ("title", "name", "headline", "subject")


def parse_json(data: bytes, *, filename: str, limits: ParserLimits) -> ParsedDocument:
    decoded = decode_text(data)
    value = _loads(decoded.text.lstrip("\ufeff"))
    lines, too_deep = flatten(value)
    warnings = [w for w in (decoding_warning(decoded), _depth_warning(too_deep)) if w]
    return ParsedDocument(
        text="\n".join(lines),
        title=_title(value) or filename_stem(filename),
        format="json",
        mime="application/json",
        metadata={"encoding": decoded.encoding},
        warnings=tuple(warnings),
    )


def parse_jsonl(data: bytes, *, filename: str, limits: ParserLimits) -> ParsedDocument:
    decoded = decode_text(data)
    blocks: list[str] = []
    total = 0
    invalid: list[tuple[int, str]] = []
    too_deep = False
    first_record: Any = None
    for number, line in enumerate(decoded.text.lstrip("\ufeff").split("\n"), start=1):
        if not line.strip():
            continue
        total += 1
        try:
            record = json.loads(line)
        except RecursionError:
            invalid.append((number, "nested too deeply"))
            continue
        except ValueError as exc:
            invalid.append((number, _describe(exc)))
            continue
        lines, deep = flatten(record)
        too_deep = too_deep or deep
        if not blocks:
            first_record = record
        blocks.append("\n".join(lines))
    if not blocks:
        line_no, reason = invalid[0] if invalid else (1, "no records")
        raise ParseError(
            f"The JSONL file has no valid line: none of its {total:,} lines is JSON "
            f"(line {line_no}: {reason})."
        )
    warnings = [decoding_warning(decoded), _depth_warning(too_deep)]
    if invalid:
        line_no, reason = invalid[0]
        warnings.append(
            f"{len(invalid):,} of {total:,} lines are not valid JSON and were skipped "
            f"(first at line {line_no}: {reason})."
        )
    return ParsedDocument(
        text="\n\n".join(blocks),
        title=_title(first_record) or filename_stem(filename),
        format="jsonl",
        mime="application/x-ndjson",
        metadata={"encoding": decoded.encoding, "records": len(blocks)},
        warnings=tuple(w for w in warnings if w),
    )


def flatten(value: Any, *, max_depth: int = MAX_DEPTH) -> tuple[list[str], bool]:
    """`key.path[0].child: value` lines in document order; True when `max_depth` was hit.

    Below `max_depth` a value is kept whole, as compact JSON, on its path's line.
    """
    lines: list[str] = []
    too_deep = False
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, node, depth = stack.pop()
        container = isinstance(node, dict | list) and len(node) > 0
        if container and depth >= max_depth:
            too_deep = True
            lines.append(_line(path, _compact(node)))
        elif isinstance(node, dict) and node:
            # Reversed onto the stack so they come off in document order.
            for key, child in reversed(node.items()):
                stack.append((f"{path}.{key}" if path else str(key), child, depth + 1))
        elif isinstance(node, list) and node:
            for index in range(len(node) - 1, -1, -1):
                stack.append((f"{path}[{index}]", node[index], depth + 1))
        else:
            lines.append(_line(path, _scalar(node)))
    return lines, too_deep


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ParseError(
            "The JSON is nested too deeply to read (thousands of levels of brackets)."
        ) from None
    except ValueError as exc:
        raise ParseError(f"The JSON is invalid: {_describe(exc)}.") from None


def _describe(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno} (character {exc.pos})"
    return str(exc)[:200]  # e.g. an integer with more digits than Python converts


def _line(path: str, value: str) -> str:
    return f"{path}: {value}" if path else value


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)  # the empty {} and []


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (RecursionError, ValueError):
        return "…"


def _depth_warning(too_deep: bool) -> str | None:
    if not too_deep:
        return None
    return f"Values nested deeper than {MAX_DEPTH} levels were kept as JSON text on one line."


def _title(value: Any) -> str:
    if isinstance(value, dict):
        for key in _TITLE_KEYS:
            candidate = value.get(key)
            if isinstance(candidate, str) and short_title(candidate):
                return short_title(candidate)
    return ""
