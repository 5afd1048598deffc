"""Bounds: the range the words and numbers of two aligned names allow their score to be in
(steps 3 and 4 of `name_similarity`): words on both sides, words on one side only (a
qualifier, extra parts of an identifier, words after or in front), the same words in another
order, initials, typos; different numbers, or a number in one name only.
"""

from __future__ import annotations

from knowledge.consolidation.names.alignment import _align, _Side
from knowledge.consolidation.names.words import _ARTICLES, _HONORIFICS, _words

# Words that, present in one name and not the other, make a different entity: "South Korea"
# / "Korea", "New York" / "York", "iPhone 14 Pro" / "iPhone 14", "John Smith Jr." / "John Smith".
_QUALIFIERS = (
    _words("new old north south east west northern southern eastern western upper lower")
    | _words("pro max mini plus ultra lite air se")  # product variants
    | _words("women womens men mens youth jr junior sr senior")
    | _words("not non semi anti pre post sub")  # "semi-supervised", "Attention Is Not ..."
)


Bounds = tuple[float, float, str]  # the score is clamped into [low, high], for the reason


# Types whose name with words added in front or between is a narrower thing of the type,
# never the same one: a concept's ("Data Structures" / "Structure", "AI ethics" /
# "ethics"), where a person's first name or a maker's name in front ("Albert Einstein",
# "Adobe Photoshop") adds nothing.
NARROWER_TYPES = frozenset({"concept"})


def _word_bounds(
    ka: str, kb: str, side_a: _Side, side_b: _Side, *, narrower: bool = False
) -> Bounds:
    """Step 3: what the words left after aligning them one to one say (`narrower`: the
    type is one of NARROWER_TYPES)."""
    found = _align(side_a, side_b)
    left_a = [side_a.key(i) for i in side_a.left]
    left_b = [side_b.key(i) for i in side_b.left]
    if left_a and left_b:
        short, long = sorted((ka, kb), key=len)
        if " " not in short and len(short) <= 6 and short in long and short not in long.split():
            return 0.0, 0.3, f"substring only ({short!r} in {long!r})"
        return 0.0, 0.5, f"different words ({' '.join(left_a)} / {' '.join(left_b)})"
    if left_a or left_b:
        side = side_a if left_a else side_b
        extra = left_a or left_b
        qualifiers = [w for w in extra if w in _QUALIFIERS]
        matched = [i for i in range(len(side.tokens)) if i not in side.left]
        if qualifiers:
            return 0.0, 0.4, f"qualifier in one name only ({' '.join(qualifiers)})"
        if side.code:
            # "dict" is not "configparser.ConfigParser.read_dict", nor "trace" "Py_TRACE_REFS".
            return 0.0, 0.6, f"extra parts of an identifier ({' '.join(extra)})"
        if matched and min(side.left) > max(matched):
            return 0.0, 0.7, f"extra words after ({' '.join(extra)})"
        if narrower:
            return 0.0, 0.75, f"extra words, a narrower thing ({' '.join(extra)})"
        return 0.75, 0.85, f"extra words ({' '.join(extra)})"
    if ("and" in side_a.filler) != ("and" in side_b.filler):
        # Two things named together against one: "Exceptions and warnings" / "exception
        # Warning", "Python and C" / "Python's C" ("&" is read as "and").
        return 0.0, 0.85, "'and' in one name only"
    if "initial" in found.kinds:
        return 0.75, 0.85, "initials or shortened words"
    if "typo" in found.kinds:
        return 0.9, 0.9, "typo"
    if any(j2 < j1 for (_, j1), (_, j2) in zip(found.pairs, found.pairs[1:], strict=False)):
        if side_a.code or side_b.code:
            # "received_data" is not "data_received", nor "MAX_Py_ssize_t" "PY_SSIZE_T_MAX".
            return 0.0, 0.5, "the parts of an identifier in another order"
        if side_a.filler != side_b.filler:
            return 0.0, 0.85, "same words in another order, joined differently"
        return 0.85, 1.0, "same words in another order"
    if found.kinds & {"acronym", "spacing"}:
        return 0.9, 1.0, "acronym of words" if "acronym" in found.kinds else "words run together"
    joining = (side_a.filler ^ side_b.filler) - _ARTICLES - _HONORIFICS
    if joining and min(len(side_a.tokens), len(side_b.tokens)) == 1:
        # One word against a phrase built around it: "Statements" / "The del statement",
        # "Operators" / "in-operator" ("del", "in" are filler words in "del Toro").
        return 0.0, 0.85, f"one word and a phrase with it ({' '.join(sorted(joining))})"
    return 0.95, 1.0, "same words"


def _number_bounds(side_a: _Side, side_b: _Side) -> list[Bounds]:
    """Step 4: different numbers, or a number in one name only."""
    numbers_a = {n for n in side_a.numbers if n is not None}
    numbers_b = {n for n in side_b.numbers if n is not None}
    if numbers_a and numbers_b and numbers_a != numbers_b:
        shown = " vs ".join(" ".join(sorted(n)) for n in (numbers_a, numbers_b))
        return [(0.0, 0.3, f"number differs ({shown})")]
    if numbers_a != numbers_b:
        return [(0.0, 0.6, "number in one name only")]
    return []
