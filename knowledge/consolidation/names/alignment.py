"""Word alignment: the words of two names matched one to one (the same word, its singular or
number, words run together, the acronym of a run of words, a typo, an initial), so that what
is left over can bound the score (knowledge/consolidation/names/bounds.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz.distance import OSA

from knowledge.consolidation.names.code_names import _is_identifier, _spelled_as_code
from knowledge.consolidation.names.normalise import _number_value, _singular, _Token
from knowledge.consolidation.names.words import _FILLER

# Word beginnings that mean opposites: "hypertension" / "hypotension" is no typo.
_CONTRASTS = (("hyper", "hypo"), ("inter", "intra"), ("micro", "macro"))


def _is_typo(x: str, y: str) -> bool:
    """One slip of the keyboard in words of 5+ letters: one edit, or two in words of 9+.

    Short words are where one letter makes another word, so for them the slip must come
    after the first three letters ("Nvidea", "Tolkein", not "Granada"/"Grenada") unless it
    is a swap of neighbours ("Swtich"), and must not change only the ending ("Maria"/
    "Mario", "Louis"/"Louise", "Daniel"/"Daniela" are names of their own). Long words only
    need the first two letters right ("Düsseldorf"/"Duesseldorf", "Chernobyl"/"Chornobyl").
    Opposites ("hyper"/"hypo", "micro"/"macro") are never typos.
    """
    shorter = min(len(x), len(y))
    if not (x.isalpha() and y.isalpha()) or shorter < 5 or x[0] != y[0]:
        return False
    long_words = shorter >= 9
    distance = OSA.distance(x, y)
    if distance > (2 if long_words else 1):
        return False
    for one, other in _CONTRASTS:
        if (x.startswith(one) and y.startswith(other)) or (
            x.startswith(other) and y.startswith(one)
        ):
            return False
    if len(x) == len(y) and sorted(x) == sorted(y) and distance == 1:
        return True  # neighbours swapped
    prefix = len(_common_prefix(x, y))
    if len(x) == len(y) and prefix == shorter - 1:
        return False  # only the last letter differs
    if long_words:
        return prefix >= 2
    return 3 <= prefix < shorter


def _common_prefix(x: str, y: str) -> str:
    i = 0
    while i < min(len(x), len(y)) and x[i] == y[i]:
        i += 1
    return x[:i]


@dataclass
class _Side:
    """One name's words as the alignment sees them: filler words set aside, each word's
    singular ("economies" / "economy") and number value ("II" / "2" / "second")."""

    tokens: list[_Token]
    stems: list[str]
    numbers: list[str | None]
    filler: frozenset[str]
    left: list[int]  # indices of words not matched yet
    code: bool = False  # one identifier: "os.POSIX_SPAWN_DUP2", "ConfigParser.read_dict"
    # Written as code somewhere ("struct _inittab", "reset()", "d[key]"): its words are
    # spelled exactly, so none is a typo of another word or part of an acronym's run.
    spelled: bool = False

    @classmethod
    def of(cls, name: str, tokens: list[_Token]) -> _Side:
        """`name`'s side. In a name written with underscores or an index ("d[key]") every
        word counts, "del" and "of" too (see below)."""
        identifier = "_" in name or "[" in name
        # A letter at the end or written as an initial is part of the name: "Vitamin A",
        # "Hepatitis E", "J. Y. Smith". In an identifier joined by underscores every part
        # is: "supernet_of" is not "supernet", nor "BOM_UTF16_LE" "BOM_UTF16"; nor is a
        # part's plural its singular ("get_config_vars" / "get_config_var").
        filler = [
            not identifier
            and t.key in _FILLER
            and not (len(t.key) == 1 and (t.dotted or i == len(tokens) - 1))
            for i, t in enumerate(tokens)
        ]
        kept = [t for t, skip in zip(tokens, filler, strict=True) if not skip] or tokens
        return cls(
            tokens=kept,
            stems=[t.key if identifier else _singular(t).key for t in kept],
            numbers=[_number_value(t, i) for i, t in enumerate(kept)],
            filler=frozenset(t.key for t, skip in zip(tokens, filler, strict=True) if skip),
            left=list(range(len(kept))),
            code=_is_identifier(name),
            spelled=_spelled_as_code(name) or "[" in name,
        )

    def key(self, i: int) -> str:
        return self.tokens[i].key


@dataclass
class _Alignment:
    kinds: set[str]
    pairs: list[tuple[int, int]]  # words matched exactly, (index in a, index in b)

    def take(self, a: _Side, i: int, b: _Side, j: int, kind: str) -> None:
        a.left.remove(i)
        b.left.remove(j)
        self.kinds.add(kind)


def _align(a: _Side, b: _Side) -> _Alignment:
    """Match the words of two names one to one; what is matched leaves `left`.

    In order: the same word (or its singular, or the same number); one word written as
    two ("Face book") or as the acronym of a run of words ("NY Times" / "New York Times");
    a typo; an initial or a shortened word ("J." / "John", "Geoff" / "Geoffrey", the latter
    only next to a word matched exactly).
    """
    found = _Alignment(set(), [])
    for i in list(a.left):
        for j in b.left:
            same_number = a.numbers[i] is not None and a.numbers[i] == b.numbers[j]
            if a.stems[i] == b.stems[j] or same_number:
                found.take(a, i, b, j, "exact")
                found.pairs.append((i, j))
                break
    for x, y in ((a, b), (b, a)):
        for i in list(x.left):
            word = x.tokens[i]
            match = _run_match(word, y)
            if match is not None:
                kind, run = match
                x.left.remove(i)
                for k in run:
                    y.left.remove(k)
                found.kinds.add(kind)
    for i in list(a.left):
        for j in b.left:
            if _is_typo(a.key(i), b.key(j)) and not _spelled_exactly(a, i, b, j):
                found.take(a, i, b, j, "typo")
                break
    anchored = bool(found.pairs)
    for x, y in ((a, b), (b, a)):
        for i in list(x.left):
            short = x.key(i)
            if x.numbers[i] is not None or not short.isalpha():
                continue
            for j in y.left:
                full = y.key(j)
                if y.numbers[j] is not None or not full.isalpha() or len(full) < 2:
                    continue
                initial = len(short) == 1 and full[0] == short
                shortened = (
                    anchored
                    and len(short) >= 3
                    and full.startswith(short)
                    and len(full) - len(short) >= 2
                )
                if initial or shortened:
                    found.take(x, i, y, j, "initial")
                    break
    return found


# A word with a capital inside it after three small letters, or two capitals before two
# small ones: "OpenGL", "StreamReader", "DOMString" (not "DiCaprio", "MacArthur").
_CODE_WORD = re.compile(r"[a-z]{3}[A-Z]|[A-Z]{2}[a-z]{2}")


def _spelled_exactly(a: _Side, i: int, b: _Side, j: int) -> bool:
    """Whether word i of `a` or word j of `b` is written as code, where one letter makes
    another name: "OpenGL" / "OpenCL", "StreamReader" / "StreamRecoder", "docstring" /
    "DOMString", "resent-to" / "reset()" are no typos (on the Python manual such pairs
    were merged as typos)."""
    return (
        a.spelled
        or b.spelled
        or _CODE_WORD.search(a.tokens[i].original) is not None
        or _CODE_WORD.search(b.tokens[j].original) is not None
    )


def _run_match(word: _Token, side: _Side) -> tuple[str, list[int]] | None:
    """A run of 2+ unmatched words of `side` that `word` joins or abbreviates."""
    left = side.left
    for size in range(2, min(len(left), 8) + 1):
        for s in range(len(left) - size + 1):
            run = left[s : s + size]
            if run[-1] - run[0] != size - 1:
                continue
            parts = [side.tokens[k].key for k in run]
            if "".join(parts) == word.key:
                return "spacing", run
            # A code name's parts are no words to abbreviate (see `_acronym_similarity`):
            # "SI" is not "struct _inittab".
            code = side.code or side.spelled
            if word.acronym and not code and "".join(p[0] for p in parts) == word.key:
                return "acronym", run
    return None
