"""Query-entity recognition: active entities whose canonical name or alias is one of the
query's n-grams, put through the same canonical key as consolidation (one indexed `= ANY`
lookup, no scans). Recognised entities rank first among the result's entities and seed the
graph expansion."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from django.db import connection

from knowledge.canonical import EDGE_PUNCTUATION
from knowledge.consolidation.keys import entity_key, suffixes
from knowledge.retrieval.types import Recognised

# Recognition looks at the first words of the query only, n-grams of up to this many words.
MAX_RECOGNITION_WORDS = 64
MAX_NGRAM_WORDS = 6


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that never start or end a name worth looking up ("the" is dropped by the canonical
# key anyway, so "The Hague" is found through "Hague").
_STOPWORDS = _words(
    """a an the and or but if of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then
    once here there when where why how all any both each few more most other some such no
    nor not only own same so than too very can will just should now is are was were be been
    being have has had having do does did doing i me my we our you your he him his she her
    it its they them their what which who whom this that these those am tell show find
    give list please"""
)
_WORD = re.compile(r"\S+")


def _ngrams(text: str) -> list[tuple[str, int, int]]:
    """(n-gram text as written, first word, end word) of the query's first words; n-grams
    that start or end with a stopword are left out (names rarely do, and the canonical key
    drops a leading article anyway)."""
    spans = [m.span() for m in _WORD.finditer(text)][:MAX_RECOGNITION_WORDS]
    words = [text[a:b].strip(EDGE_PUNCTUATION).casefold() for a, b in spans]
    out = []
    for i in range(len(spans)):
        if not words[i] or words[i] in _STOPWORDS:
            continue
        for j in range(i + 1, min(len(spans), i + MAX_NGRAM_WORDS) + 1):
            last = words[j - 1]
            if not last or last in _STOPWORDS:
                continue
            out.append((text[spans[i][0] : spans[j - 1][1]].strip(EDGE_PUNCTUATION), i, j))
    return out


def _keys(ngram: str, suffix_words: frozenset[str]) -> set[str]:
    """The canonical keys an entity named `ngram` could have: organisations drop corporate
    suffixes, other types do not (knowledge/consolidation/keys.py `entity_key`). The
    organisation key differs only when the n-gram ends in a suffix, so only then is it
    computed (each key costs tens of microseconds)."""
    plain = entity_key(ngram, "")
    keys = {plain} if plain else set()
    last = ngram.rsplit(maxsplit=1)[-1].strip(EDGE_PUNCTUATION).replace(".", "").casefold()
    if last in suffix_words:
        organisation = entity_key(ngram, "organization")
        if organisation:
            keys.add(organisation)
    return {k for k in keys if len(k) > 1 and k not in _STOPWORDS}


def recognise(workspace_id: int, text: str, type_ids: list[int] | None) -> list[Recognised]:
    """Active entities named (by canonical name or alias) in the query, in query order.

    One query over the (workspace, canonical_name) and (workspace, canonical) indexes. A
    match inside a longer match of another entity is dropped ("York" in "New York")."""
    suffix_words = frozenset(s.replace(".", "").casefold() for s in suffixes("organization"))
    by_key: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for ngram, start, end in _ngrams(text):
        for key in _keys(ngram, suffix_words):
            by_key[key].append((ngram, start, end))
    if not by_key:
        return []
    found: list[Recognised] = []
    for entity_id, key in _named(workspace_id, sorted(by_key), type_ids):
        for ngram, start, end in by_key.get(key, []):
            found.append(Recognised(int(entity_id), ngram, start, end))
    return _outermost(found)


def _named(workspace_id: int, keys: list[str], type_ids: list[int] | None) -> list[tuple[int, str]]:
    """(entity id, key) of the active entities whose canonical name or an alias is a key."""
    type_clause = " AND e.type_id = ANY(%s)" if type_ids is not None else ""
    params: list[Any] = [workspace_id, keys]
    if type_ids is not None:
        params.append(type_ids)
    params += [workspace_id, keys]
    if type_ids is not None:
        params.append(type_ids)
    sql = f"""
        SELECT e.id, e.canonical_name FROM knowledge_entity e
        WHERE e.workspace_id = %s AND e.canonical_name = ANY(%s) AND e.state = 'active'
        {type_clause}
        UNION
        SELECT e.id, a.canonical FROM knowledge_alias a
        JOIN knowledge_entity e ON e.id = a.entity_id
        WHERE a.workspace_id = %s AND a.canonical = ANY(%s) AND e.state = 'active'
        {type_clause}
    """  # noqa: S608 (fixed SQL; values are parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _outermost(found: list[Recognised]) -> list[Recognised]:
    """One match per entity, none strictly inside another entity's longer span, in query
    order."""
    found.sort(key=lambda r: (-(r.end - r.start), r.start, r.entity_id))
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
