"""Similarity: how likely two names of one type are one entity, as a score in 0..1 with the
reasons a reviewer reads (`name_similarity`). Keys decide first (equal keys, equal letters,
an acronym); otherwise rapidfuzz's figures on the keys, bounded by what the aligned words and
numbers say (knowledge/consolidation/names/bounds.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from knowledge.consolidation.names.acronyms import acronym_expansion
from knowledge.consolidation.names.alignment import _Side
from knowledge.consolidation.names.bounds import NARROWER_TYPES, _number_bounds, _word_bounds
from knowledge.consolidation.names.code_names import (
    _code_path,
    _is_identifier,
    _spelled_as_code,
)
from knowledge.consolidation.names.normalise import (
    DEFAULT_CORPORATE_SUFFIXES,
    _key_tokens,
    _loose,
)


@dataclass(frozen=True)
class Similarity:
    """How alike two names are (0..1) and why, in words a reviewer can read."""

    score: float
    reasons: tuple[str, ...]


def _acronym_similarity(a: str, b: str, suffixes: Iterable[str]) -> Similarity | None:
    """Step 1's acronym: a merge for words ("IBM" / "International Business Machines"), a
    question for one camel-case word ("JS" / "JavaScript", but "BC" / "BaseCookie", "CR" /
    "CertificateRequest" on the Python manual), nothing for a code name with underscores or
    dots: the initials of "Py_UNICODE_TOUPPER" or "asynchat.async_chat.collect_incoming_data"
    spell "PUT" and "ACID" by chance. On the Python manual 116 names were merged as
    acronyms, 3 of them rightly; 77 of the expansions were code names, 18 camel-case."""
    long = acronym_expansion(a, b, suffixes=suffixes)
    if long is None or "_" in long or (len(_code_path(long) or ()) > 1):
        return None
    if _is_identifier(long):
        return Similarity(UNSURE_SCORE, (ACRONYM_REASON, "of one camel-case word"))
    return Similarity(ACRONYM_SCORE, (ACRONYM_REASON,))


ACRONYM_REASON = "acronym"
ACRONYM_SCORE = 0.93
# In every type's review band (concept's starts here), under every automatic merge (see
# TYPE_THRESHOLDS).
UNSURE_SCORE = 0.8


LOOSE_REASON = "same letters ignoring spacing and punctuation"


def name_similarity(
    a: str,
    b: str,
    *,
    suffixes: Iterable[str] = DEFAULT_CORPORATE_SUFFIXES,
    entity_type: str | None = None,
) -> Similarity:
    """How likely two names of one type are one entity, with the reasons.

    1. Equal canonical keys: 1.0. The same letters once spaces, dots before letters, a
       trailing "js" or ".com" are ignored ("Node.js" / "NodeJS", "Face book" /
       "Facebook"): 0.95, but 0.3 for a web address and a name of a type outside
       ADDRESS_NAMED_TYPES ("python.org" / "Python"). One name written as the acronym of
       the other ("IBM" / "International Business Machines", "AT&T" / "American Telephone
       and Telegraph"; the short one must look like an acronym, so "The Who" is not the
       WHO): 0.93; 0.8 (a question) when the long one is one camel-case word ("JS" /
       "JavaScript"); never for a code name with underscores or dots (see
       `_acronym_similarity`).
    2. Otherwise a base from rapidfuzz on the keys: 0.7 x max(ratio, token-sort ratio) +
       0.3 x token-set ratio. Token-sort forgives word order; token-set forgives extra
       words, but only for 30 %, since an extra word is as often another entity ("Ford
       Foundation") as the same one ("Harvard University").
    3. The words are then aligned one to one, filler words ("of", "the", "Dr.") aside
       (none in an identifier joined by underscores: "supernet_of" is not "supernet"):
       equal words, singulars or numbers, words run together, acronyms of runs of words,
       typos, initials. What is left decides:
       - words on both sides ("John Smith" / "Jane Smith", "Austria" / "Australia"): at
         most 0.5; at most 0.3 when one name is one short word found in the other only
         inside a word ("Java" / "JavaScript");
       - words on one side only: at most 0.4 if one is a qualifier ("South Korea" /
         "Korea", "iPhone 14 Pro", "Semi-supervised learning"); at most 0.6 if that side is
         one code identifier ("dict" / "configparser.ConfigParser.read_dict"); at most 0.7 if they
         follow the shared words ("Ford Foundation", "Harvard University"); 0.75..0.85 if
         they come before or between them ("Albert Einstein", "Microsoft Excel"), but at
         most 0.75 for a type in NARROWER_TYPES (`entity_type`: a concept with words in
         front is a narrower one, "Data Structures" / "Structure");
       - nothing: "and" in one name only caps it at 0.85 ("Exceptions and warnings" /
         "exception Warning" names two things against one); an initial or shortened word
         puts the score in 0.75..0.85 ("J. Smith" / "John Smith" is for a person to
         decide), a typo makes it 0.9, acronyms of word runs or words run together at
         least 0.9, the same words in the same order at least 0.95; in another order at
         least 0.85, but at most 0.85 when the small words differ too ("University of
         Washington" / "Washington University" are two universities). A word written as
         code ("OpenGL", "DOMString", any word of "reset()" or "struct _inittab") is never
         a typo of another, nor part of an acronym's run; in a name with an index
         ("d[key]") filler words count ("del d[key]" is a statement).
    4. Numbers last: different numbers ("iPhone 14" / "iPhone 15", "World War I" / "World War
       II", "GPT-4" / "GPT-4o") cap the score at 0.3, a number in one name only ("Windows
       10" / "Windows") at 0.6.

    The score is symmetric and deterministic; an empty name scores 0. The first three
    reasons are always the rapidfuzz figures ("token-set 0.96") unless step 1 decided.
    """
    ta = _key_tokens(a, suffixes, strip_suffixes=True)
    tb = _key_tokens(b, suffixes, strip_suffixes=True)
    ka = " ".join(t.key for t in ta)
    kb = " ".join(t.key for t in tb)
    decided = _decided_by_keys(a, b, ka, kb, suffixes, entity_type)
    if decided is not None:
        return decided
    token_set = fuzz.token_set_ratio(ka, kb) / 100
    ratio = fuzz.ratio(ka, kb) / 100
    token_sort = fuzz.token_sort_ratio(ka, kb) / 100
    score = 0.7 * max(ratio, token_sort) + 0.3 * token_set
    reasons = [f"token-set {token_set:.2f}", f"ratio {ratio:.2f}", f"token-sort {token_sort:.2f}"]
    side_a = _Side.of(a, ta)
    side_b = _Side.of(b, tb)
    for low, high, reason in (
        _word_bounds(ka, kb, side_a, side_b, narrower=entity_type in NARROWER_TYPES),
        *_number_bounds(side_a, side_b),
    ):
        score = min(max(score, low), high)
        reasons.append(reason)
    return Similarity(round(score, 4), tuple(reasons))


# Types whose web address names the owner ("Amazon.com" is Amazon); of the other types a
# web address is a site of its own: on the Python manual "python.org" had joined the
# language Python and "command.com" the word "Command".
ADDRESS_NAMED_TYPES = frozenset({"organization", "product"})
_WEB_ADDRESS = re.compile(r"\.(com|org)$")
ADDRESS_REASON = "a web address is a site of its own"


def _decided_by_keys(
    a: str, b: str, ka: str, kb: str, suffixes: Iterable[str], entity_type: str | None
) -> Similarity | None:
    """Step 1: names whose keys alone decide (empty, equal, equal letters, an acronym)."""
    if not ka or not kb:
        return Similarity(0.0, ("empty name",))
    if ka == kb:
        return Similarity(1.0, ("same canonical name",))
    if _loose(ka) == _loose(kb):
        addresses = bool(_WEB_ADDRESS.search(ka)) + bool(_WEB_ADDRESS.search(kb))
        if addresses == 1 and entity_type is not None and entity_type not in ADDRESS_NAMED_TYPES:
            return Similarity(0.3, (LOOSE_REASON, ADDRESS_REASON))
        if _spelled_as_code(a) or _spelled_as_code(b):
            return Similarity(UNSURE_SCORE, (LOOSE_REASON, "in a code name"))
        return Similarity(0.95, (LOOSE_REASON,))
    return _acronym_similarity(a, b, suffixes)
