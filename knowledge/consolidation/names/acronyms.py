"""Acronyms: the initials a long name could be written as, whether a short name looks like
an acronym, and which of two names is the other's expansion ("IBM" / "International Business
Machines", "AT&T", "3M", "W3C", "LLMs").

An acronym shares no letters in a row with its expansion, so neither blocking nor the letter
similarity would ever bring the two together without these rules.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

from knowledge.consolidation.names.normalise import (
    _clean,
    _key_tokens,
    _number_value,
    _Token,
    _tokens,
)
from knowledge.consolidation.names.words import _ACRONYM_SKIP, _ARTICLES, _JOINING

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _initials(
    words: Sequence[_Token], *, keep: frozenset[str] = frozenset(), digits: bool = False
) -> str:
    """First letters, skipping `_ACRONYM_SKIP` words other than those in `keep`; numbers
    are kept whole ("World War II" -> "wwii"), or as digits with `digits` ("ww2")."""
    letters: list[str] = []
    for i, token in enumerate(words):
        if token.key in _ACRONYM_SKIP and token.key not in keep:
            continue
        if i == 0 and token.key in _ARTICLES and len(words) > 1:
            continue
        number = _number_value(token, i)
        if number is not None:
            letters.append(number if digits else token.key)
        else:
            letters.append(token.key[0])
    return "".join(letters)


def acronym_of(name: str) -> str | None:
    """The initials of a multi-word name's significant words, casefolded, else None.

    "International Business Machines" -> "ibm", "Amazon Web Services" -> "aws",
    "Hewlett-Packard" -> "hp" (hyphens separate words). Of, and, &, the, for, de, du and la
    are skipped ("Federal Bureau of Investigation" -> "fbi"), except that a joining word
    between exactly two significant words is kept, which is how such names are abbreviated:
    "Bank of America" -> "boa", "Department of Defense" -> "dod", "The Bank of England" ->
    "boe". A number keeps all its characters ("World War II" -> "wwii"). A single word has
    no acronym.
    """
    tokens = _tokens(name)
    if tokens and tokens[0].key in _ARTICLES and len(tokens) > 1:
        tokens = tokens[1:]
    significant = [t for t in tokens if t.key not in _ACRONYM_SKIP]
    if len(significant) < 2:
        return None
    return _initials(tokens, keep=_JOINING if len(significant) == 2 else frozenset())


@lru_cache(maxsize=16384)
def looks_like_acronym(name: str) -> bool:
    """Whether a name is written as an acronym: "IBM", "I.B.M.", "NASA", "3M", "AT&T", "BoA".
    Remembered: short-form planning asks it of each name once per other name of the page.

    2 to 8 letters and digits, no spaces, at least one capital and at most one lowercase
    letter per three letters, joined only by dots, "&" or hyphens.
    """
    text = unicodedata.normalize("NFKC", name).strip()
    if not text or any(c.isspace() for c in text) or len(text) > 16:
        return False
    if any(not (c.isalnum() or c in ".&-") for c in text) or not text[0].isalnum():
        return False
    alnum = [c for c in text if c.isalnum()]
    letters = [c for c in alnum if c.isalpha()]
    if not 2 <= len(alnum) <= 8 or not letters:
        return False
    upper = sum(c.isupper() for c in letters)
    lower = sum(c.islower() for c in letters)
    return upper >= 1 and lower <= len(letters) // 3


def _acronym_letters(name: str) -> set[str]:
    """What an acronym-looking name spells: "AT&T" -> att, "3M" -> 3m and mmm, "W3C" -> wwwc,
    "LLMs" -> llms and llm."""
    cleaned = _clean(name).replace(" and ", "")
    plain = "".join(c for c in cleaned if c.isalnum()).casefold()
    found = {plain}
    if re.fullmatch(r"[^a-z]*[A-Z][^a-z]*s", cleaned):  # "LLMs", "CNNs": a plural
        found.add(plain[:-1])
    if len(plain) > 4:
        return found
    expanded = re.sub(r"([2-4])([a-z])", lambda m: m.group(2) * int(m.group(1)), plain)
    found.add(expanded)
    found.add(re.sub(r"([a-z])([2-4])", lambda m: m.group(1) * int(m.group(2)), plain))
    return {f for f in found if f}


def _acronym_candidates(name: str, suffixes: Iterable[str]) -> set[str]:
    """The acronyms a long name could be written as (with and without "of" etc.)."""
    found: set[str] = set()
    tokens = _key_tokens(name, suffixes, strip_suffixes=True)
    # Camel-case words count as several: "JavaScript" -> "js", "PlayStation 5" -> "ps5",
    # "HyperText Transfer Protocol" -> "http".
    split = [part for token in tokens for part in _camel_parts(token)]
    for words in (tokens, split):
        if len(words) >= 2:
            found.add(_initials(words))
            found.add(_initials(words, keep=_JOINING))
            found.add(_initials(words, keep=_ACRONYM_SKIP))
            found.add(_initials(words, digits=True))
    return {f for f in found if 2 <= len(f) <= 12}  # nobody spells out longer acronyms


def _camel_parts(token: _Token) -> list[_Token]:
    parts = [p for p in _CAMEL.split(token.original) if p]
    if len(parts) < 2 or not all(len(p) >= 2 and p.isalpha() for p in parts):
        return [token]
    return [_Token(p.casefold(), p, acronym=False, dotted=False) for p in parts]


def _acronym_match(a: str, b: str, suffixes: Iterable[str]) -> bool:
    return acronym_expansion(a, b, suffixes=suffixes) is not None


def acronym_expansion(a: str, b: str, *, suffixes: Iterable[str] = ()) -> str | None:
    """The longer of two names when the other is written as its acronym ("IBM" /
    "International Business Machines"), else None."""
    for short, long in ((a, b), (b, a)):
        if looks_like_acronym(short) and _acronym_letters(short) & _acronym_candidates(
            long, suffixes
        ):
            return long
    return None
