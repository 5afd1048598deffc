"""The small words the name rules read names with: articles, the words an acronym skips,
honorifics, and the filler words that carry no identity when two names are compared. Shared
by normalisation, acronyms, blocking and alignment, so they live apart from all four.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Leading articles dropped from a key ("The Beatles" -> "beatle"): at most one, and only when
# something is left ("The The" stays "the").
_ARTICLES = _words("the a an le la les der die das el")
# Words an acronym skips ("Bank of America" -> "boa"); "&" is read as "and".
_ACRONYM_SKIP = _words("of and the for de du la")
# Skipped words an acronym may still spell: "Bank of America" -> "boa", "Banco de España" ->
# "bde" (never "and" or "the": "Procter & Gamble" -> "pg").
_JOINING = _words("of for de du la")
# Honorifics: "Dr. Jane Goodall" is "Jane Goodall".
_HONORIFICS = _words("mr mrs ms dr prof sir dame")
# Words that carry no identity when two names are compared token by token.
_FILLER = (
    _ARTICLES
    | _ACRONYM_SKIP
    | _words("in on at to von van den del della di da des y e et und")
    | _HONORIFICS
)
