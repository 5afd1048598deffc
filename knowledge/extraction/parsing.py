"""Turn a model's reply to the extraction prompt into entities and relations, tolerantly.

Why this exists: models rarely follow the record format exactly. They wrap it in code
fences, chat before and after it, swap `<|>` for `|`, drop parentheses, quote fields with
any quote character, leave out fields, fall back to JSON, or pad names with zero-width
characters. Rejecting such a reply wastes the call; accepting it blindly puts garbage in the
graph. `parse_extraction_output` keeps every record it can read, skips what it cannot, and
says how much of each happened in `ParseResult.counts`, with a sample of the skipped lines
in `ParseResult.problems` (at most MAX_PROBLEMS, each "reason: line" cut to PROBLEM_CHARS).
It never raises, whatever string it is given. It does not judge whether a name is a good
entity name; that is knowledge/extraction/validation.py.

The format the prompt asks for, one record per line (LightRAG style; `##` may also
separate records on one line, and `<|COMPLETE|>` may end the reply):

    ("entity"<|>NAME<|>TYPE<|>DESCRIPTION)
    ("relationship"<|>SOURCE<|>TARGET<|>TYPE<|>DESCRIPTION<|>KEYWORDS<|>STRENGTH)

Decisions:
- `done` is True only when the reply holds no record at all (not even a broken one) and
  either contains `<|DONE|>` or is a short "nothing left" answer ("No.", "None",
  "Nothing missed", "No additional entities found", …). A reply with records and
  `<|DONE|>` is not done: the records are new, so gleaning should go on.
- JSON is tried only when no record line was found.
- A relationship in LightRAG's original six-field shape (no TYPE; strength last) gets the
  type "related_to"; one with five fields after the keyword and a numeric last field is
  read as SOURCE, TARGET, TYPE, DESCRIPTION, STRENGTH when the third field is a short
  type-like phrase (at most four words), else as LightRAG's DESCRIPTION, KEYWORDS, STRENGTH.
- Entity fields beyond the description are joined onto the description; relationship
  fields beyond the strength are ignored. Both are counted as "extra_fields".
- Types are lowercase snake_case, at most MAX_TYPE_CHARS long; `NEW:gene` gives type
  "gene" with `proposed_type=True`.
- Names are NFKC-normalised, whitespace-collapsed and cut to MAX_NAME_CHARS; descriptions
  are whitespace-collapsed and cut to MAX_DESCRIPTION_CHARS.
- Duplicate entities (same casefolded name and type) are merged into the first one.
  Relations are not de-duplicated here.
- Strength is the first number in its field, clamped to 1 to 10 (so a 0-1 score such as
  0.8 becomes 1.0; "8/10" is 8); missing or unreadable means DEFAULT_STRENGTH.

Counts keys ("lines", "entities" and "relations" are always present, the others only when
non-zero):
- lines: non-blank lines in the reply.
- entities / relations: how many were returned (after merging duplicates).
- fenced: code-fence lines (```, ```json, ~~~) dropped, or fences stripped off a record.
- prose_lines: lines or `##` pieces that were not records (including table headers such
  as "Entity | Name | Type"), ignored.
- list_prefix: records preceded by a list marker ("1.", "-", "*", "•"), which was removed.
- wrong_delimiter: records not separated by exactly `<|>` (`|`, ` | `, `<||>`, ` <|> `,
  tabs, full-width U+FF5C, or quoted fields separated by commas).
- missing_parens: records lacking the opening or closing parenthesis.
- malformed: records with fewer than three fields; JSON records that are not objects.
- missing_fields: records skipped because a required field was empty (entity name or type,
  relation source or target).
- defaulted_type: relations without a type, given "related_to".
- extra_fields: records with more fields than the format has.
- bad_strength: relations whose strength was missing or unreadable (DEFAULT_STRENGTH used).
- strength_clamped: relations whose strength was outside 1 to 10.
- proposed_types: records whose type had the NEW: prefix.
- duplicates: duplicate entities merged into an earlier one.
- unknown_record: parenthesised records whose record type is neither entity nor relation.
- long_name / long_description: names or descriptions cut to their maximum length.
- json_fallback: 1 when the records came from JSON instead of record lines.
- json_invalid: 1 when the reply had no records and looked like JSON but did not parse.
- truncated: 1 when max_items entities + relations were reached and parsing stopped.
- stray_chars: zero-width, control, bidi, tag and odd space characters removed or replaced.
- internal_error: a bug in this module was caught (should never appear).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import replace

from knowledge.extraction.types import ExtractedEntity, ExtractedRelation, ParseResult

MAX_PROBLEMS = 20
PROBLEM_CHARS = 200
MAX_NAME_CHARS = 300
MAX_DESCRIPTION_CHARS = 2000
MAX_TYPE_CHARS = 64
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 100
DEFAULT_STRENGTH = 5.0
MIN_STRENGTH = 1.0
MAX_STRENGTH = 10.0
DEFAULT_RELATION_TYPE = "related_to"

# How many `{` / `[` positions to try as the start of a JSON value.
_JSON_ATTEMPTS = 20
# A reply longer than this (normalised) is never read as "nothing left".
_SHORT_REPLY_CHARS = 80

_ENTITY = "entity"
_RELATION = "relation"
_RECORD_KINDS: dict[str, str] = {
    "entity": _ENTITY,
    "entities": _ENTITY,
    "ent": _ENTITY,
    "node": _ENTITY,
    "nodes": _ENTITY,
    "relationship": _RELATION,
    "relationships": _RELATION,
    "relation": _RELATION,
    "relations": _RELATION,
    "rel": _RELATION,
    "edge": _RELATION,
    "edges": _RELATION,
    "link": _RELATION,
}

# --- Characters --------------------------------------------------------------------------

_ODD_NEWLINES = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_ODD_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
# Control characters (but tab and newline), soft hyphen, zero-width and bidi marks, word
# joiners, BOM, interlinear annotation marks, lone surrogates and tag characters.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\u00ad\u061c\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
    "\U000e0000-\U000e007f]"
)
_WHITESPACE = re.compile(r"\s+")
_QUOTES = (
    "\"'`\u201c\u201d\u2018\u2019\u201e\u201a\u00ab\u00bb\u300c\u300d\u300e\u300f\uff02\uff07\u00b4"
)
# Quotes stripped even when unpaired: double-ish ones. Single quotes are often apostrophes
# at the end or start of a real name ("Guns N' Roses"), so those go only in pairs.
_LOOSE_QUOTES = '"`\u201c\u201d\u201e\u00ab\u00bb\u300c\u300d\u300e\u300f\uff02'

# --- Markers and layout ------------------------------------------------------------------

_COMPLETE_MARKER = re.compile(r"<\s*\|\s*COMPLETE\s*\|\s*>", re.IGNORECASE)
_DONE_MARKER = re.compile(r"<\s*\|\s*DONE\s*\|\s*>", re.IGNORECASE)
_FENCE_LINE = re.compile(r"(?:```|~~~)[\w+.-]*")
_INLINE_FENCE_START = re.compile(r"```[A-Za-z0-9_+-]*\s*")
_LIST_PREFIX = re.compile(
    r"(?:\d{1,3}[.)]|[-*\u2022+])\s*(?=[(\uff08\"'`\u201c\u2018]|(?:entity|relation|relationship|edge)\b)",
    re.IGNORECASE,
)
_RECORD_START = re.compile(
    r"[(\uff08\"'`\u201c\u2018]|(?:entity|entities|node|relation|relationship|edge)\b",
    re.IGNORECASE,
)

# --- Fields ------------------------------------------------------------------------------

_ANGLE_DELIMITER = re.compile(r"<\s*[|\uff5c]{1,3}\s*>")
_PIPE_DELIMITER = re.compile("[|\uff5c]")
_COMMA_TUPLE = re.compile(r'"[^"]*"(?:\s*,\s*(?:"[^"]*"|[-+]?\d+(?:\.\d+)?))+')
_COMMA_FIELD = re.compile(r'"([^"]*)"|([-+]?\d+(?:\.\d+)?)')
_NEW_PREFIX = re.compile(r"new\s*:\s*", re.IGNORECASE)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_WORD = re.compile(r"[\W_]+")
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
_STRENGTH_ONLY = re.compile(r"[-+]?\d+(?:[.,]\d+)?(?:\s*/\s*10)?")
_KEYWORD_SEPARATORS = re.compile("[,\uff0c;]")

# --- "Nothing left" replies --------------------------------------------------------------

_WHAT = r"(?:entities|entity|relationships|relationship|relations|relation|records|items|ones)"
_NOTHING_LEFT = re.compile(
    r"(?:no|nope|none|nothing|done|n/?a)"
    r"|(?:no )?(?:there (?:are|were|is) )?(?:no|none|nothing)"
    r"(?: (?:more|additional|further|other|new|missing|missed|remaining|extra|else))?"
    rf"(?: {_WHAT}(?: (?:or|and) {_WHAT})?)?"
    r"(?: (?:was|were|have been|has been|is|are))?"
    r"(?: (?:found|missed|left|remaining|identified|detected|to add|to extract|to report))?"
)
_NOT_LETTERS = re.compile(r"[^a-z/ ]+")

# Column names: a "record" made only of these is a table header, i.e. prose.
_HEADER_WORDS = frozenset(
    {
        "name",
        "entity",
        "entity name",
        "entity_name",
        "type",
        "entity type",
        "entity_type",
        "description",
        "source",
        "target",
        "source entity",
        "target entity",
        "relationship",
        "relationship type",
        "relation",
        "keywords",
        "strength",
    }
)

_JSON_OPENER = re.compile(r"[\[{]")
_NAME_KEYS = ("name", "entity_name", "entity", "title", "label")
_TYPE_KEYS = ("type", "entity_type", "category")
_DESCRIPTION_KEYS = ("description", "entity_description", "relationship_description", "desc")
_SOURCE_KEYS = ("source", "src", "src_id", "source_entity", "from", "head", "subject")
_TARGET_KEYS = ("target", "tgt", "tgt_id", "target_entity", "to", "tail", "object")
_RELATION_TYPE_KEYS = ("type", "relation", "relationship", "relation_type", "predicate", "label")
_KEYWORDS_KEYS = ("keywords", "relationship_keywords")
_STRENGTH_KEYS = ("strength", "weight", "relationship_strength", "score")
_KIND_KEYS = ("kind", "record", "record_type")
_ENTITY_LIST_KEYS = ("entities", "nodes")
_RELATION_LIST_KEYS = ("relationships", "relations", "edges")


def parse_extraction_output(text: str, *, max_items: int = 500) -> ParseResult:
    """Everything readable in one model reply, with counts of what was not. Never raises."""
    result = ParseResult()
    try:
        _parse(text, max_items, result)
    except Exception as exc:  # a bug here must not lose a paid-for reply
        result.count("internal_error")
        note_problem(result, "internal_error", f"{type(exc).__name__}: {exc}")
    for key in ("lines", "entities", "relations"):
        result.counts.setdefault(key, 0)
    result.counts["entities"] = len(result.entities)
    result.counts["relations"] = len(result.relations)
    return result


def note_problem(result: ParseResult, reason: str, text: str) -> None:
    """Keep "reason: text" (cut to PROBLEM_CHARS) while fewer than MAX_PROBLEMS are kept."""
    if len(result.problems) < MAX_PROBLEMS:
        result.problems.append(f"{reason}: {text}"[:PROBLEM_CHARS])


# --- The reply ---------------------------------------------------------------------------


class _Collector:
    """Adds entities and relations to a result, merging duplicates and stopping at a limit."""

    def __init__(self, result: ParseResult, max_items: int) -> None:
        self.result = result
        self.max_items = max_items
        self.full = False
        self._entity_index: dict[tuple[str, str], int] = {}
        self._descriptions: dict[int, list[str]] = {}

    def _room(self) -> bool:
        if len(self.result.entities) + len(self.result.relations) < self.max_items:
            return True
        if not self.full:
            self.full = True
            self.result.count("truncated")
        return False

    def add_entity(self, entity: ExtractedEntity) -> None:
        key = (entity.name.casefold(), entity.type)
        index = self._entity_index.get(key)
        if index is not None:
            self.result.count("duplicates")
            seen = self._descriptions[index]
            if entity.description and entity.description.casefold() not in {
                d.casefold() for d in seen
            }:
                seen.append(entity.description)
                merged = " ".join(seen)[:MAX_DESCRIPTION_CHARS].rstrip()
                self.result.entities[index] = replace(
                    self.result.entities[index], description=merged
                )
            return
        if not self._room():
            return
        self._entity_index[key] = len(self.result.entities)
        self._descriptions[len(self.result.entities)] = (
            [entity.description] if entity.description else []
        )
        self.result.entities.append(entity)

    def add_relation(self, relation: ExtractedRelation) -> None:
        if self._room():
            self.result.relations.append(relation)


def _parse(text: str, max_items: int, result: ParseResult) -> None:
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = _clean_text(text, result)
    done_marker = _DONE_MARKER.search(text) is not None
    text = _DONE_MARKER.sub("\n", _COMPLETE_MARKER.sub("\n", text))
    collector = _Collector(result, max_items)

    records_seen = 0
    for line in text.split("\n"):
        if collector.full:
            break
        stripped = line.strip()
        if not stripped:
            continue
        result.count("lines")
        if _FENCE_LINE.fullmatch(stripped):
            result.count("fenced")
            continue
        stripped = _strip_inline_fences(stripped, result)
        for piece in _split_records(stripped):
            if collector.full:
                break
            if _parse_record(piece, collector):
                records_seen += 1
            else:
                result.count("prose_lines")

    if records_seen == 0:
        _parse_json(text, collector)
        if not result.entities and not result.relations:
            result.done = done_marker or _says_nothing_left(text)


def _clean_text(text: str, result: ParseResult) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text, odd_newlines = _ODD_NEWLINES.subn("\n", text)
    text, odd_spaces = _ODD_SPACES.subn(" ", text)
    text, invisible = _INVISIBLE.subn("", text)
    if odd_newlines + odd_spaces + invisible:
        result.count("stray_chars", odd_newlines + odd_spaces + invisible)
    return text


def _strip_inline_fences(line: str, result: ParseResult) -> str:
    """Remove ``` glued to a record: ```("entity"<|>…)``` ."""
    if line.startswith("```"):
        line = _INLINE_FENCE_START.sub("", line, count=1)
        result.count("fenced")
    if line.endswith("```"):
        line = line[:-3].rstrip()
        result.count("fenced")
    return line


def _split_records(line: str) -> list[str]:
    """Split a line on the `##` record delimiter, but not a `##` inside a description."""
    parts = line.split("##")
    if len(parts) == 1:
        return [line]
    records: list[list[str]] = [[parts[0]]]
    for part in parts[1:]:
        current = records[-1]
        if (
            not any(p.strip() for p in current)
            or not part.strip()
            or current[-1].rstrip().endswith((")", "\uff09"))
            or _RECORD_START.match(part.lstrip())
        ):
            records.append([part])
        else:
            current.append(part)
    joined = ("##".join(r).strip() for r in records)
    return [r for r in joined if r]


def _says_nothing_left(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    lines = [line for line in lines if not _FENCE_LINE.fullmatch(line.strip())]
    joined = " ".join(lines).casefold()
    normalised = _WHITESPACE.sub(" ", _NOT_LETTERS.sub(" ", joined)).strip()
    if not normalised or len(normalised) > _SHORT_REPLY_CHARS:
        return False
    return _NOTHING_LEFT.fullmatch(normalised) is not None


# --- Records -----------------------------------------------------------------------------


def _parse_record(raw: str, collector: _Collector) -> bool:
    """Read one record into the collector; False when `raw` is not a record at all."""
    result = collector.result
    text = raw.strip()
    listed = _LIST_PREFIX.match(text)
    if listed:
        text = text[listed.end() :].lstrip()
    opened = text.startswith(("(", "\uff08"))
    if opened:
        text = text[1:]
    text = text.rstrip()
    if text.endswith((",", ";", ".")) and text[:-1].rstrip().endswith((")", "\uff09")):
        text = text[:-1].rstrip()
    closers = text.count(")") + text.count("\uff09")
    openers = text.count("(") + text.count("\uff08")
    closed = text.endswith((")", "\uff09")) and closers > openers
    if closed:
        text = text[:-1]

    split = _split_fields(text)
    if split is None:
        return False
    fields, exact_delimiter = split
    kind = _RECORD_KINDS.get(_strip_quotes(fields[0].strip()).rstrip(":").strip().casefold())
    if kind is None:
        if opened and len(fields) >= 2:
            result.count("unknown_record")
            note_problem(result, "unknown_record", raw)
            return True
        return False

    words = [w for w in (_strip_quotes(f).casefold() for f in fields[1:]) if w]
    if words and all(w in _HEADER_WORDS for w in words):
        return False  # a table header such as "Entity | Name | Type | Description"
    if listed:
        result.count("list_prefix")
    if not exact_delimiter:
        result.count("wrong_delimiter")
    if not (opened and closed):
        result.count("missing_parens")
    if len(fields) < 3:
        result.count("malformed")
        note_problem(result, "malformed", raw)
        return True
    if kind == _ENTITY:
        _entity_from_fields(fields[1:], raw, collector)
    else:
        _relation_from_fields(fields[1:], raw, collector)
    return True


def _split_fields(text: str) -> tuple[list[str], bool] | None:
    """The fields of a record and whether they were separated by exactly `<|>`."""
    if _ANGLE_DELIMITER.search(text):
        parts = _ANGLE_DELIMITER.split(text)
        exact = all(d == "<|>" for d in _ANGLE_DELIMITER.findall(text))
        exact = exact and not any(
            (i > 0 and part[:1].isspace()) or (i < len(parts) - 1 and part[-1:].isspace())
            for i, part in enumerate(parts)
        )
        return parts, exact
    if _PIPE_DELIMITER.search(text):
        return _PIPE_DELIMITER.split(text), False
    if "\t" in text:
        return text.split("\t"), False
    normalised = text.strip().translate({0x201C: '"', 0x201D: '"'})
    if _COMMA_TUPLE.fullmatch(normalised):
        return [
            m.group(1) if m.group(1) is not None else m.group(2)
            for m in _COMMA_FIELD.finditer(normalised)
        ], False
    return None


def _entity_from_fields(fields: list[str], raw: str, collector: _Collector) -> None:
    result = collector.result
    if len(fields) > 3:
        result.count("extra_fields")
    description = " ".join(_strip_quotes(f) for f in fields[2:] if f.strip())
    entity = _make_entity(fields[0], fields[1], description, result)
    if entity is None:
        note_problem(result, "missing_fields", raw)
        return
    collector.add_entity(entity)


def _relation_from_fields(fields: list[str], raw: str, collector: _Collector) -> None:
    result = collector.result
    source, target = fields[0], fields[1]
    rest = fields[2:]
    if len(rest) == 3 and _STRENGTH_ONLY.fullmatch(_strip_quotes(rest[2])):
        if len(_strip_quotes(rest[0]).split()) > 4:
            # LightRAG's own shape: description, keywords, strength.
            rest = ["", rest[0], rest[1], rest[2]]
        else:
            # Type, description, strength: the keywords were left out.
            rest = [rest[0], rest[1], "", rest[2]]
    if len(rest) > 4:
        result.count("extra_fields")
    relation = _make_relation(
        source,
        target,
        rest[0] if len(rest) > 0 else "",
        rest[1] if len(rest) > 1 else "",
        rest[2] if len(rest) > 2 else "",
        rest[3] if len(rest) > 3 else None,
        result,
    )
    if relation is None:
        note_problem(result, "missing_fields", raw)
        return
    collector.add_relation(relation)


# --- Building items ----------------------------------------------------------------------


def _make_entity(
    name_raw: str, type_raw: str, description_raw: str, result: ParseResult
) -> ExtractedEntity | None:
    name = _clean_name(name_raw, result)
    entity_type, proposed = _normalise_type(type_raw)
    if not name or not entity_type:
        result.count("missing_fields")
        return None
    if proposed:
        result.count("proposed_types")
    return ExtractedEntity(
        name=name,
        type=entity_type,
        description=_clean_description(description_raw, result),
        proposed_type=proposed,
    )


def _make_relation(
    source_raw: str,
    target_raw: str,
    type_raw: str,
    description_raw: str,
    keywords_raw: str | list[str],
    strength_raw: object,
    result: ParseResult,
) -> ExtractedRelation | None:
    source = _clean_name(source_raw, result)
    target = _clean_name(target_raw, result)
    if not source or not target:
        result.count("missing_fields")
        return None
    relation_type, proposed = _normalise_type(type_raw)
    if not relation_type:
        relation_type, proposed = DEFAULT_RELATION_TYPE, False
        result.count("defaulted_type")
    if proposed:
        result.count("proposed_types")
    strength = _parse_strength(strength_raw)
    if strength is None:
        strength = DEFAULT_STRENGTH
        result.count("bad_strength")
    elif not MIN_STRENGTH <= strength <= MAX_STRENGTH:
        strength = min(MAX_STRENGTH, max(MIN_STRENGTH, strength))
        result.count("strength_clamped")
    return ExtractedRelation(
        source=source,
        target=target,
        type=relation_type,
        description=_clean_description(description_raw, result),
        keywords=_keywords(keywords_raw),
        strength=strength,
        proposed_type=proposed,
    )


def _strip_quotes(value: str) -> str:
    """Strip matching-ish quotes around a value, and unpaired double quotes."""
    value = value.strip()
    while len(value) >= 2 and value[0] in _QUOTES and value[-1] in _QUOTES:
        value = value[1:-1].strip()
    if value[:1] and value[0] in _LOOSE_QUOTES:
        value = value[1:].strip()
    if value[-1:] and value[-1] in _LOOSE_QUOTES:
        value = value[:-1].strip()
    return value


def _collapse(value: str) -> str:
    return _WHITESPACE.sub(" ", value).strip()


def _clean_name(raw: str, result: ParseResult) -> str:
    name = _strip_quotes(_collapse(unicodedata.normalize("NFKC", raw)))
    if len(name) > MAX_NAME_CHARS:
        name = name[:MAX_NAME_CHARS].rstrip()
        result.count("long_name")
    return name


def _clean_description(raw: str, result: ParseResult) -> str:
    description = _strip_quotes(_collapse(raw))
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[:MAX_DESCRIPTION_CHARS].rstrip()
        result.count("long_description")
    return description


def _normalise_type(raw: str) -> tuple[str, bool]:
    """("works_for", False) from "Works For"; ("gene", True) from "NEW: Gene"."""
    value = _strip_quotes(_collapse(unicodedata.normalize("NFKC", raw)))
    proposed = False
    prefix = _NEW_PREFIX.match(value)
    if prefix:
        proposed = True
        value = _strip_quotes(value[prefix.end() :])
    value = _CAMEL_BOUNDARY.sub("_", value)
    value = _NON_WORD.sub("_", value.lower()).strip("_")
    value = value[:MAX_TYPE_CHARS].rstrip("_")
    return value, proposed and bool(value)


def _parse_strength(raw: object) -> float | None:
    if raw is None or isinstance(raw, bool):
        return None
    try:
        if isinstance(raw, int | float):
            value = float(raw)
        elif isinstance(raw, str):
            match = _NUMBER.search(raw)
            if match is None:
                return None
            value = float(match.group().replace(",", "."))
        else:
            return None
    except (OverflowError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _keywords(raw: str | list[str]) -> tuple[str, ...]:
    items = _KEYWORD_SEPARATORS.split(_strip_quotes(raw)) if isinstance(raw, str) else raw
    keywords: list[str] = []
    seen: set[str] = set()
    for item in items:
        keyword = _strip_quotes(_collapse(item))[:MAX_KEYWORD_CHARS].strip()
        if keyword and keyword.casefold() not in seen:
            seen.add(keyword.casefold())
            keywords.append(keyword)
        if len(keywords) >= MAX_KEYWORDS:
            break
    return tuple(keywords)


# --- JSON fallback -----------------------------------------------------------------------


def _parse_json(text: str, collector: _Collector) -> bool:
    """Read a JSON reply into the collector; True when one was found."""
    result = collector.result
    found = _find_json(text)
    if found is None:
        if '{"' in text or "[{" in text or '"entities"' in text:
            result.count("json_invalid")
            note_problem(result, "json_invalid", text.strip())
        return False
    value, start, end = found
    result.count("json_fallback")
    # Only the text around the JSON value is prose.
    prose = sum(
        1
        for line in (text[:start] + "\n" + text[end:]).split("\n")
        if line.strip() and not _FENCE_LINE.fullmatch(line.strip())
    )
    result.counts.pop("prose_lines", None)
    if prose:
        result.count("prose_lines", prose)

    if isinstance(value, dict) and any(k in value for k in _ENTITY_LIST_KEYS + _RELATION_LIST_KEYS):
        for key in _ENTITY_LIST_KEYS:
            for item in _as_list(value.get(key)):
                _json_record(item, _ENTITY, collector)
        for key in _RELATION_LIST_KEYS:
            for item in _as_list(value.get(key)):
                _json_record(item, _RELATION, collector)
    else:
        for item in _as_list(value):
            _json_record(item, None, collector)
    return True


def _find_json(text: str) -> tuple[object, int, int] | None:
    """The outermost JSON value that looks like extraction output, with its span.

    Openers inside a value that parsed, or inside one that failed only after getting past
    them (a truncated reply), are not tried: a fragment of a broken reply is not the reply.
    """
    decoder = json.JSONDecoder()
    skip_until = 0
    attempts = 0
    for opener in _JSON_OPENER.finditer(text):
        start = opener.start()
        if start < skip_until:
            continue
        attempts += 1
        if attempts > _JSON_ATTEMPTS:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            skip_until = max(skip_until, exc.pos)
            continue
        except (ValueError, RecursionError):
            return None
        if _looks_like_extraction(value):
            return value, start, end
        skip_until = end
    return None


def _looks_like_extraction(value: object) -> bool:
    if isinstance(value, dict):
        keys = set(value)
        return bool(
            keys & set(_ENTITY_LIST_KEYS + _RELATION_LIST_KEYS)
            or (keys & set(_NAME_KEYS) and keys & set(_TYPE_KEYS))
            or (keys & set(_SOURCE_KEYS) and keys & set(_TARGET_KEYS))
        )
    if isinstance(value, list):
        return any(isinstance(item, dict) for item in value)
    return False


def _as_list(value: object) -> list[object]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value]
    return []


def _json_text(record: dict[str, object], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
    return ""


def _json_record(item: object, kind: str | None, collector: _Collector) -> None:
    if collector.full:
        return
    result = collector.result
    if not isinstance(item, dict):
        result.count("malformed")
        note_problem(result, "malformed", json.dumps(item, ensure_ascii=False, default=str))
        return
    record = {str(k).casefold(): v for k, v in item.items()}
    if kind is None:
        kind = _RECORD_KINDS.get(_json_text(record, _KIND_KEYS).strip().casefold())
    if kind is None:
        has_ends = any(k in record for k in _SOURCE_KEYS) and any(k in record for k in _TARGET_KEYS)
        kind = _RELATION if has_ends else _ENTITY
    raw = json.dumps(item, ensure_ascii=False, default=str)
    if kind == _ENTITY:
        entity = _make_entity(
            _json_text(record, _NAME_KEYS),
            _json_text(record, _TYPE_KEYS),
            _json_text(record, _DESCRIPTION_KEYS),
            result,
        )
        if entity is None:
            note_problem(result, "missing_fields", raw)
        else:
            collector.add_entity(entity)
        return
    keywords_value = next((record[k] for k in _KEYWORDS_KEYS if k in record), "")
    keywords: str | list[str]
    if isinstance(keywords_value, list):
        keywords = [str(k) for k in keywords_value if isinstance(k, str | int | float)]
    else:
        keywords = keywords_value if isinstance(keywords_value, str) else ""
    strength = next((record[k] for k in _STRENGTH_KEYS if k in record), None)
    relation = _make_relation(
        _json_text(record, _SOURCE_KEYS),
        _json_text(record, _TARGET_KEYS),
        _json_text(record, _RELATION_TYPE_KEYS),
        _json_text(record, _DESCRIPTION_KEYS),
        keywords,
        strength,
        result,
    )
    if relation is None:
        note_problem(result, "missing_fields", raw)
    else:
        collector.add_relation(relation)
