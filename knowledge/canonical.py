"""Canonical names: the key an extracted name is matched on within its type.

Deliberately simple for now (Unicode NFKC, casefold, whitespace collapsed, punctuation at
the ends dropped): alias consolidation, articles, plurals and corporate suffixes belong to
the consolidation step that replaces exact matching.
"""

from __future__ import annotations

import re
import unicodedata

_SPACE = re.compile(r"\s+")
# Quotes, brackets and sentence punctuation: never part of a name at its ends.
EDGE_PUNCTUATION = "\"'`.,;:!?()[]{}<>\u00ab\u00bb\u201c\u201d\u2018\u2019"


def canonical_name(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACE.sub(" ", text).strip().strip(EDGE_PUNCTUATION).strip()
    return text[:300]


def type_name(value: str) -> str:
    """A type as stored in the registry: lowercase snake_case, at most 64 characters."""
    text = unicodedata.normalize("NFKC", value).strip().lower()
    text = re.sub(r"[^\w]+", "_", text).strip("_")
    return text[:64]
