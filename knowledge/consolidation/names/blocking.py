"""Blocking keys: a handful of strings per name, stored in an array column with a GIN index,
so that the candidates a name is compared with are found with one `&&` query instead of
comparing every name with every other.
"""

from __future__ import annotations

from collections.abc import Iterable

from knowledge.consolidation.names.acronyms import (
    _acronym_candidates,
    _acronym_letters,
    looks_like_acronym,
)
from knowledge.consolidation.names.normalise import (
    DEFAULT_CORPORATE_SUFFIXES,
    _key_tokens,
    _loose,
    _Token,
)
from knowledge.consolidation.names.words import _FILLER, _words

# The most blocking keys a name gets (the array column stays small, the `&&` query fast).
MAX_BLOCKING_KEYS = 24
# Tokens of a name that contribute keys of their own (the longest, i.e. most distinctive).
_MAX_BLOCKING_TOKENS = 6


# Frequent words that would make a blocking key match half the graph; the full key and the
# other words still block such names.
_GENERIC = _words(
    "university college institute school international national company bank group"
    " association society foundation department ministry state city republic united"
    " new north south east west"
)


def _significant(tokens: list[_Token]) -> list[str]:
    """Distinctive words: 3+ characters, no filler or generic word; dotted words also give
    their parts ("node.js" -> "node.js", "node")."""
    words: list[str] = []
    for token in tokens:
        parts = [token.key] + (token.key.strip(".").split(".") if "." in token.key else [])
        words.extend(w for w in parts if len(w) >= 3 and w not in _FILLER | _GENERIC)
    return words


def blocking_keys(name: str, *, suffixes: Iterable[str] = DEFAULT_CORPORATE_SUFFIXES) -> list[str]:
    """At most 24 strings; two names that may be one entity very probably share one.

    - the full canonical key: every variant `canonical_key` absorbs (case, accents,
      articles, suffixes, plurals, "&") meets here, whatever the length of the name; and
      the key without spaces, dots or a trailing "js" ("Node.js", "NodeJS", "Node" ->
      "node"; "Face book" -> "facebook"), which meets the full key of the other spelling;
    - each significant word (3+ letters, not a filler word like "of"/"the", not a generic
      one like "university"/"bank" that would match half the graph; a dotted word also gives
      its parts, "vue.js" -> "vue"), the longest six: names that differ by added or dropped
      words ("Harvard" / "Harvard University", "Tolkien" / "J. R. R. Tolkien") share one;
    - "p:" + the first 4 and "s:" + the last 4 letters of those words: a typo changes one
      or two neighbouring letters, so it usually leaves one end intact ("Microsft",
      "Gogle") -- and "Face book" / "Facebook" share "p:face";
    - "a:" + the acronym of a multi-word name (with and without its suffixes, "of", etc.)
      or of a camel-case word ("JavaScript" -> "a:js"), and for an acronym-looking name
      "a:" + its own letters ("I.B.M." -> "a:ibm", "3M" -> "a:mmm" too): an acronym shares
      no letters-in-a-row with its expansion, so this is the only way the two meet.

    Unrelated names rarely share a key: tokens are whole words, the prefixes and suffixes
    are four letters long, generic words are left out. What is missed: aliases with nothing
    in common ("Facebook" / "Meta Platforms", "Cologne" / "Köln"), and typos that hit both
    ends of a short word ("Telsa"). The order is stable and there are no duplicates.
    """
    tokens = _key_tokens(name, suffixes, strip_suffixes=True)
    key = " ".join(t.key for t in tokens)
    if not key:
        return []
    keys: list[str] = [key, _loose(key)]
    acronyms = sorted(_acronym_candidates(name, suffixes))
    if looks_like_acronym(name):
        acronyms.extend(sorted(_acronym_letters(name)))
    keys.extend(f"a:{a}" for a in acronyms)
    words = _significant(tokens)
    words = sorted(dict.fromkeys(words), key=lambda w: (-len(w), words.index(w)))
    for word in words[:_MAX_BLOCKING_TOKENS]:
        keys.append(word)
        keys.append(f"p:{word[:4]}")
        keys.append(f"s:{word[-4:]}")
    return list(dict.fromkeys(keys))[:MAX_BLOCKING_KEYS]
