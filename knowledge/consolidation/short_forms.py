"""Short forms within one document: which of a document's shorter names stand for a full
name it used before ("Kestrel" after "Kestrel Navigation System", "Lindqvist" after "Jonas
Lindqvist", "KNS" after "Kestrel Navigation System (KNS)"). Pure: the document's names,
types and places in, a plan out; knowledge/actions/resolution.py and the materializer act
on it.

A shorter name S is a short form of a full name F when they have the same type and one of:

- S is a code name F qualifies (`names.shorter_form`: "SkipTest" and "unittest.SkipTest",
  in either order: the page's overview often shortens a name its signature gives whole);

or, F's first mention coming no later than S's:

- S is written as an acronym (`names.looks_like_acronym`) and either F introduced it ("F
  (S)" in the text: S's letters in order in F, the first one F's first letter) or S spells
  the initials of F (with or without its corporate suffix, "of", "and"...);
- S is a proper, capitalised part of F's distinctive words (articles, honorifics, "of" and
  an organisation's legal suffix aside): for a person the first name, the surname (the last
  word) or both; for other types the head, F's first words ("Kestrel", "Helios",
  "Blue Harbor"). Never a location's (a lake's town, a "New" city's old namesake are
  places of their own), a concept's or a technology's (a description's head is a thing of
  its own: "Unicode" of "Unicode Character Database"), a code name's ("PyCapsule" of
  "PyCapsule_GetName"), never a part whose dropped words hold a number or a qualifier
  ("Halo" of "Halo Scanner 3", "Galaxy" of "Galaxy S23 Ultra": a line, not the model), and
  never a single common word ("System", "General", "National", "Global"...), a word of
  fewer than three letters or an initial.

When the document names two or more full names S could stand for (different names of the
type, anywhere in it: "Helios" with "Helios Robotics Inc." and "Helios Capital"), S is
ambiguous: it stays what resolution makes of it and the pairs go to the review queue. A
full name that is itself a short form of a longer one counts as that longer one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from knowledge.consolidation import names

NameKey = tuple[str, int]  # (canonical key, entity type id), as resolution's Key

# Types whose names are never shortened to a part of themselves (acronyms still apply): a
# place's part is another place, and a concept's or a technology's name is a description
# whose head is a thing of its own ("Unicode" / "Unicode Character Database", "Exception"
# / "Exception Handling", "Subprocess" / "Subprocess and Threads" on the Python manual).
NO_PARTS = frozenset({"location", "concept", "technology"})
PERSON = "person"
QUALIFIED = "qualified name"

# Words that never stand for a name on their own, even capitalised at the head of one.
COMMON_WORDS = (
    names._GENERIC
    | names._QUALIFIERS
    | names._FILLER
    | names._words(
        "general global american european british asian african chinese indian royal"
        " central first second third standard digital advanced applied open smart data"
        " system systems software technology technologies solution solutions service"
        " services project program programme operation operations team network networks"
        " lab labs research capital partners partner industries industry energy health"
        " medical financial trust council board agency authority office committee"
        " commission center centre river lake mount port bay cape island islands valley"
        " great grand saint san santa fort world national international union alliance"
        " federation league club museum hospital clinic church airport station bridge"
        " road street avenue park platform protocol model version edition series module"
        " unit"
    )
)


@dataclass(frozen=True, slots=True)
class DocName:
    """One name of the document: as first written, what the caller matches entities on
    (`key`: the canonical key and the type's id), the type's name, and where it occurs
    (document offsets, in order)."""

    name: str
    key: NameKey
    type_name: str
    places: tuple[tuple[int, int], ...]

    @property
    def first(self) -> int:
        return self.places[0][0] if self.places else 1 << 62


@dataclass(slots=True)
class ShortFormPlan:
    """Short name key -> the full name it stands for; ambiguous short name key -> the full
    names it could stand for; and why, per short name key, in words."""

    resolved: dict[NameKey, DocName] = field(default_factory=dict)
    ambiguous: dict[NameKey, list[DocName]] = field(default_factory=dict)
    reasons: dict[NameKey, str] = field(default_factory=dict)


@lru_cache(maxsize=16384)
def _words(name: str, type_name: str) -> tuple[names._Token, ...]:
    """The distinctive words of a name, in order: articles, honorifics, "of"... aside and,
    for organisations, the legal suffix. Remembered: `plan_short_forms` compares every pair
    of a document's names, so each name's words were worked out again for every other name
    (a manual page has hundreds of names; this was most of the planning time)."""
    suffixes = names.suffixes_for_type(type_name)
    tokens = names._key_tokens(name, suffixes, strip_suffixes=True)
    return tuple(t for t in tokens if t.key not in names._FILLER or t.acronym)


def _capitalised(token: names._Token) -> bool:
    first = token.original[:1]
    return first.isupper() or first.isdigit()


def _part_of(short: DocName, full: DocName) -> str | None:
    """How `short` is a part of `full` ("head", "surname", "first name", ...), or None."""
    if full.type_name in NO_PARTS or names._is_identifier(full.name):
        return None  # nor is a code name's prefix its short form ("PyCapsule_GetName")
    s_words, f_words = _words(short.name, short.type_name), _words(full.name, full.type_name)
    if not s_words or len(s_words) >= len(f_words):
        return None
    if not all(_capitalised(t) for t in s_words):
        return None
    if any(len(t.key) == 1 or (t.dotted and len(t.key) <= 2) for t in s_words):
        return None  # initials ("J.") say too little
    if len(s_words) == 1 and (len(s_words[0].key) < 3 or s_words[0].key in COMMON_WORDS):
        return None
    if all(t.key in COMMON_WORDS for t in s_words):
        return None
    # Singular either way: only a name's last word loses its plural ("Helios" -> helio).
    s_keys = [names._singular(t).key for t in s_words]
    f_keys = [names._singular(t).key for t in f_words]
    last = len(f_keys) - 1
    if short.type_name == PERSON:
        shapes = {"first name": [0], "surname": [last], "first name and surname": [0, last]}
    else:
        shapes = {"head": list(range(len(s_keys)))}
    for shape, kept in shapes.items():
        if [f_keys[i] for i in kept] != s_keys:
            continue
        dropped = [(i, t) for i, t in enumerate(f_words) if i not in kept]
        if any(
            names._number_value(t, i) is not None or t.key in names._QUALIFIERS for i, t in dropped
        ):
            return None  # "Halo" of "Halo Scanner 3": the line, not the model
        return shape
    return None


_OPENING = re.compile(r"^\s*[(\[]\s*[\"'\u201c]?$")


def _introduced(short: DocName, full: DocName, text: str) -> bool:
    """The text says "FULL (SHORT)" somewhere, and SHORT's letters could come from FULL."""
    if not _letters_from(short.name, full.name):
        return False
    for _, end in full.places:
        for start, _ in short.places:
            if 0 <= start - end <= 4 and _OPENING.match(text[end:start]):
                return True
    return False


def _letters_from(acronym: str, full: str) -> bool:
    """Schwartz & Hearst's test: the acronym's letters occur in order in the full name
    (read right to left), its first letter at the start of the full name's first word."""
    letters = [c for c in acronym.casefold() if c.isalnum()]
    text = full.casefold()
    if not letters or not text or text[0] != letters[0]:
        return False
    position = len(text)
    for letter in reversed(letters[1:]):
        position = text.rfind(letter, 1, position)
        if position < 1:
            return False
    return True


def _acronym_of(short: DocName, full: DocName, text: str) -> str | None:
    if not names.looks_like_acronym(short.name) or " " not in full.name.strip():
        return None
    if _introduced(short, full, text):
        return "acronym introduced"
    suffixes = names.suffixes_for_type(full.type_name)
    if names._acronym_match(short.name, full.name, suffixes) or names._acronym_match(
        short.name, full.name, ()
    ):
        return "initials"
    return None


def short_form_of(short: DocName, full: DocName, text: str) -> str | None:
    """Why `short` can stand for `full` ("head", "surname", "initials", ...), or None;
    the order of their mentions aside (see `plan_short_forms`)."""
    if short.type_name != full.type_name or short.key == full.key:
        return None
    if names.shorter_form(short.name, full.name) is not None:
        if names.repeats_its_module(short.name, full.name) and _has_members(short.name, text):
            return None  # the class datetime.date, not the method datetime.datetime.date
        return QUALIFIED  # "SkipTest" after "unittest.SkipTest"
    if names.looks_like_acronym(short.name):
        return _acronym_of(short, full, text)
    return _part_of(short, full)


def _has_members(name: str, text: str) -> bool:
    """Whether the text names a member of the code name `name` ("datetime.date.today" for
    "datetime.date"): then it is a namespace of its own (see `names.repeats_its_module`)."""
    bare = re.escape(name.strip().removesuffix("()"))
    return re.search(rf"(?<![\w.]){bare}\.[A-Za-z_]", text) is not None


def plan_short_forms(doc_names: Sequence[DocName], text: str) -> ShortFormPlan:
    """Which names of one document are short forms of which of its full names (see the
    module's docstring). Longest names first, so a full name that is itself a short form
    of a longer one ("Kestrel Navigation" of "Kestrel Navigation System") passes its short
    forms on to it."""
    plan = ShortFormPlan()
    ordered = sorted(doc_names, key=lambda n: (-len(n.name.split()), -len(n.name), n.first))
    for i, short in enumerate(ordered):
        candidates: dict[NameKey, tuple[DocName, str]] = {}
        for full in ordered[:i]:
            if len(full.name) <= len(short.name):
                continue
            why = short_form_of(short, full, text)
            if why is None:
                continue
            root = plan.resolved.get(full.key, full)
            candidates.setdefault(root.key, (root, why))
        candidates = _most_qualified(candidates)
        if len(candidates) > 1:
            plan.ambiguous[short.key] = [full for full, _ in candidates.values()]
            shown = " / ".join(repr(full.name) for full, _ in candidates.values())
            plan.reasons[short.key] = f"short form {short.name!r} of {shown}"
        elif candidates:
            full, why = next(iter(candidates.values()))
            # A code name is the same API wherever the page shortens it, before its
            # qualified form too ("get_ready()" in the overview, the signature below).
            if why == QUALIFIED or full.first <= short.first:
                plan.resolved[short.key] = full
                plan.reasons[short.key] = f"short form ({why}) {short.name!r} of {full.name!r}"
    return plan


def _most_qualified(
    candidates: dict[NameKey, tuple[DocName, str]],
) -> dict[NameKey, tuple[DocName, str]]:
    """The candidates less those that are another one qualified less: "get_ready" after
    "TopologicalSorter.get_ready" and "graphlib.TopologicalSorter.get_ready" has one full
    name, the longest (on the Python manual 34 of 221 such questions were one thing: a
    page names its method both ways, the shorter first)."""
    return {
        key: (full, why)
        for key, (full, why) in candidates.items()
        if not any(
            other is not full and names.shorter_form(full.name, other.name) == full.name
            for other, _ in candidates.values()
        )
    }
