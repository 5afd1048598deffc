"""The names a text may be writing: its n-grams (runs of up to MAX_NGRAM_WORDS words that
neither start nor end with a stopword), each put through the canonical keys an entity of
that name could have (knowledge/consolidation/keys.py). A name is in the graph when one of
these keys is an active entity's canonical name or an alias's (one indexed `= ANY` lookup):
query recognition reads the first words of a question so
(knowledge/retrieval/signals/recognition.py), and known-only extraction a whole window, to
leave windows that name nothing known unsent (knowledge/selectors/matching.py,
`names_a_known_entity`)."""

from __future__ import annotations

import re
from collections import defaultdict

from knowledge.canonical import EDGE_PUNCTUATION
from knowledge.consolidation.keys import entity_key, suffixes

MAX_NGRAM_WORDS = 6


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that never start or end a name worth looking up ("the" is dropped by the canonical
# key anyway, so "The Hague" is found through "Hague").
STOPWORDS = _words(
    """a an the and or but if of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then
    once here there when where why how all any both each few more most other some such no
    nor not only own same so than too very can will just should now is are was were be been
    being have has had having do does did doing i me my we our you your he him his she her
    it its they them their what which who whom this that these those am tell show find
    give list please"""
)
_WORD = re.compile(r"\S+")


def ngrams(text: str, *, max_words: int | None = None) -> list[tuple[str, int, int]]:
    """(n-gram text as written, first word, end word) of the text's first `max_words` words
    (None: all); n-grams that start or end with a stopword are left out (names rarely do,
    and the canonical key drops a leading article anyway)."""
    spans = [m.span() for m in _WORD.finditer(text)]
    if max_words is not None:
        spans = spans[:max_words]
    words = [text[a:b].strip(EDGE_PUNCTUATION).casefold() for a, b in spans]
    out = []
    for i in range(len(spans)):
        if not words[i] or words[i] in STOPWORDS:
            continue
        for j in range(i + 1, min(len(spans), i + MAX_NGRAM_WORDS) + 1):
            last = words[j - 1]
            if not last or last in STOPWORDS:
                continue
            out.append((text[spans[i][0] : spans[j - 1][1]].strip(EDGE_PUNCTUATION), i, j))
    return out


def ngram_keys(ngram: str, suffix_words: frozenset[str]) -> set[str]:
    """The canonical keys an entity named `ngram` could have: organisations drop corporate
    suffixes, other types do not (`entity_key`). The organisation key differs only when the
    n-gram ends in a suffix, so only then is it computed (each key costs tens of
    microseconds)."""
    plain = entity_key(ngram, "")
    keys = {plain} if plain else set()
    last = ngram.rsplit(maxsplit=1)[-1].strip(EDGE_PUNCTUATION).replace(".", "").casefold()
    if last in suffix_words:
        organisation = entity_key(ngram, "organization")
        if organisation:
            keys.add(organisation)
    return {k for k in keys if len(k) > 1 and k not in STOPWORDS}


def organisation_suffix_words() -> frozenset[str]:
    return frozenset(s.replace(".", "").casefold() for s in suffixes("organization"))


def name_keys(text: str, *, max_words: int | None = None) -> dict[str, list[tuple[str, int, int]]]:
    """Every canonical key the text's n-grams could name, with the n-grams giving it."""
    suffix_words = organisation_suffix_words()
    by_key: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for ngram, start, end in ngrams(text, max_words=max_words):
        for key in ngram_keys(ngram, suffix_words):
            by_key[key].append((ngram, start, end))
    return by_key
