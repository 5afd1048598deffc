"""Query-entity recognition: active entities whose canonical name or alias is one of the
query's n-grams, put through the same canonical key as consolidation (one indexed `= ANY`
lookup, no scans). Recognised entities rank first among the result's entities and seed the
graph expansion.

The canonical key is loose on purpose (consolidation must meet "--file", "<file>" and
"file" as one key), so each match also says whether the query writes the name whole: the
same words with the same marks inside them ("--file", "file_name" or "COPY ... FROM" are
not what a question says when it writes "file", "file name" or "copy from"). Only a whole
match names the entity; a loose one is still listed, but seeds nothing
(knowledge/retrieval/signals/expansion.py)."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from django.db import connection

from knowledge.canonical import EDGE_PUNCTUATION
from knowledge.consolidation.text_names import name_keys
from knowledge.retrieval.types import Recognised

# Recognition looks at the first words of the query only.
MAX_RECOGNITION_WORDS = 64
# What a name's inner marks are compared without: apostrophes (the key deletes them) and
# the full stop of an abbreviation ("St. Louis").
_IGNORED_MARKS = re.compile(r"['\u2019]|\.(?=\s)")


def recognise(workspace_id: int, text: str, type_ids: list[int] | None) -> list[Recognised]:
    """Active entities named (by canonical name or alias) in the query, in query order.

    One query over the (workspace, canonical_name) and (workspace, canonical) indexes. A
    match inside a longer match of another entity is dropped ("York" in "New York")."""
    by_key = name_keys(text, max_words=MAX_RECOGNITION_WORDS)
    if not by_key:
        return []
    written: dict[tuple[int, str], list[str]] = defaultdict(list)
    for entity_id, key, name in _named(workspace_id, sorted(by_key), type_ids):
        written[(int(entity_id), key)].append(name)
    found: list[Recognised] = []
    for (entity_id, key), names in written.items():
        for ngram, start, end in by_key.get(key, []):
            whole = any(names_whole(ngram, name) for name in names)
            found.append(Recognised(entity_id, ngram, start, end, whole=whole))
    return _outermost(found)


def inner_marks(text: str) -> str:
    """The marks inside a name, once the punctuation around it is set aside: "--" for
    "--file", "_" for "file_name", "..." for "COPY ... FROM", "" for "`file`" or "file()"."""
    core = _IGNORED_MARKS.sub("", text.strip().strip(EDGE_PUNCTUATION + " "))
    return "".join(ch for ch in core if not (ch.isalnum() or ch.isspace()))


def names_whole(ngram: str, name: str) -> bool:
    """Whether the query's `ngram`, which has the canonical key of `name`, writes that name
    whole: the key already sets aside case, accents, a leading article and a final plural;
    what it also equates, and a question does not mean by it, is a name with other marks
    inside ("--file", "file_name", "COPY ... FROM" for "file", "file name", "copy from")."""
    return inner_marks(ngram) == inner_marks(name)


def _named(
    workspace_id: int, keys: list[str], type_ids: list[int] | None
) -> list[tuple[int, str, str]]:
    """(entity id, key, name or alias as written) of the active entities whose canonical
    name or an alias is a key."""
    type_clause = " AND e.type_id = ANY(%s)" if type_ids is not None else ""
    params: list[Any] = [workspace_id, keys]
    if type_ids is not None:
        params.append(type_ids)
    params += [workspace_id, keys]
    if type_ids is not None:
        params.append(type_ids)
    sql = f"""
        SELECT e.id, e.canonical_name, e.name FROM knowledge_entity e
        WHERE e.workspace_id = %s AND e.canonical_name = ANY(%s) AND e.state = 'active'
        {type_clause}
        UNION
        SELECT e.id, a.canonical, a.name FROM knowledge_alias a
        JOIN knowledge_entity e ON e.id = a.entity_id
        WHERE a.workspace_id = %s AND a.canonical = ANY(%s) AND e.state = 'active'
        {type_clause}
    """  # noqa: S608 (fixed SQL; values are parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _outermost(found: list[Recognised]) -> list[Recognised]:
    """One match per entity (a whole one first), none strictly inside another entity's
    longer span, in query order."""
    found.sort(key=lambda r: (-(r.end - r.start), not r.whole, r.start, r.entity_id))
    kept: list[Recognised] = []
    for r in found:
        inside = any(
            k.entity_id != r.entity_id
            and k.start <= r.start
            and r.end <= k.end
            and (k.end - k.start) > (r.end - r.start)
            for k in kept
        )
        if not inside and all(k.entity_id != r.entity_id for k in kept):
            kept.append(r)
    kept.sort(key=lambda r: (r.start, r.entity_id))
    return kept
