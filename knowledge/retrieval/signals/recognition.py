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
# What a name's inner marks are compared without: apostrophes (the key deletes them) and
# the full stop of an abbreviation ("St. Louis").
_IGNORED_MARKS = re.compile(r"['\u2019]|\.(?=\s)")


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
