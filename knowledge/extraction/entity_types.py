"""Which type an offline-extracted name gets, from its shape and its context.

Why: spaCy's small model is trained on news, where a capitalised single word in subject
position is usually a person or a company. On technical text it calls "Python" a person,
"TypeError" an organisation and "Windows" a location. So in a technical window (one with
code in it) the NER label is only a hint: code-shaped names are technologies, a person needs
a full name that is not made of dictionary words, a place needs a locative preposition, an
organisation needs a word that says so ("Foundation", "Inc."); what is left is a
technology (an unknown proper name) or a concept (common words) — never a person by
default. Prose without code keeps the model's labels, which are right there.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from types import MappingProxyType

from knowledge.extraction.noise import is_dictionary_word, words_of

# spaCy (OntoNotes) entity labels → our default entity type names.
SPACY_LABEL_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "PERSON": "person",
        "ORG": "organization",
        "GPE": "location",
        "LOC": "location",
        "FAC": "location",
        "PRODUCT": "product",
        "EVENT": "event",
        "WORK_OF_ART": "work",
        "LAW": "work",
        "NORP": "concept",
        "LANGUAGE": "concept",
    }
)

CODE_TYPE = "technology"
FALLBACK_TYPE = "concept"

ORGANIZATION_WORDS = frozenset(
    (
        "foundation", "inc", "corp", "corporation", "ltd", "llc", "gmbh", "company", "university",
        "institute", "society", "consortium", "committee", "association", "group", "council",
        "agency", "department", "ministry", "laboratory", "labs", "team", "project", "bank",
    )
)  # fmt: skip
NAME_PARTICLES = frozenset(("van", "von", "der", "de", "da", "di", "du", "le", "la", "bin", "al"))
LOCATIVE_WORDS = frozenset(("in", "at", "near", "from", "to", "across", "throughout"))
# A name as code spells it: dotted, snake_case or with a capital inside a word.
_CLASS_SUFFIX = re.compile(
    r"[a-z0-9](?:Error|Warning|Exception|Handler|Manager|Factory|Adapter|Parser|Reader|Writer"
    r"|Server|Client|Request|Response|Policy|Loader|Builder|Protocol|Type|Mixin|Base|Test)$"
)
_CODE_SHAPE = re.compile(r"^[A-Za-z_]\w*(?:\.\w+)+$|^\w*_\w+$|^[A-Z]?[a-z0-9]+[A-Z]\w*$")


# What code looks like in text that has no backticks (an API index, a flattened page): a
# call "abort()", a dotted name "asyncio.Barrier", a snake_case word "run_in_executor".
_CODE_TOKEN = re.compile(r"\b[A-Za-z_]\w*\(\)|\b[a-z_]\w+\.[A-Za-z_]\w+|\b[a-z]+_[a-z_]+\b")
_CODE_TOKENS_PER_1000_CHARS = 2.0
# Addresses are dotted too, and prose has them: "www.python.org", "info@example.com".
_ADDRESS = re.compile(r"\S+://\S+|\bwww\.\S+|\S+@\S+|\b[\w.-]+\.(?:com|org|net|edu|gov|io)\b")


def looks_technical(text: str) -> bool:
    """Whether a document is about code: it has code spans, or code-shaped words at least
    every 500 characters (a general index lists "abort() (asyncio.Barrier method)" with
    no backticks, and NER there makes a person of "asyncio")."""
    if "`" in text:
        return True
    hits = sum(1 for _ in _CODE_TOKEN.finditer(_ADDRESS.sub(" ", text)))
    return hits >= 3 and hits * 1000 >= _CODE_TOKENS_PER_1000_CHARS * len(text)


def is_code_shaped(name: str) -> bool:
    return bool(_CODE_SHAPE.match(name))


def is_unmistakably_code(name: str) -> bool:
    """Code even in prose with no code in it: dotted or snake_case names, and CamelCase
    ending like a class ("ResourceWarning", "BaseHandler"), which no company or person is
    called. Plain CamelCase ("McDonald", "PayPal") keeps the model's label there."""
    if not is_code_shaped(name):
        return False
    return "." in name or "_" in name.strip("_") or bool(_CLASS_SUFFIX.search(name))


def ner_type(
    label: str, name: str, *, technical: bool, locative: bool, lowercase: Collection[str] = ()
) -> str | None:
    """Our type for an NER entity, or None when its label is not one we map.

    `lowercase` holds the words the window's prose writes in lower case: a single word
    found there is a common word ("Task" beside "task"), one never found there is a proper
    name even when a dictionary knows it ("Python", "Pascal").
    """
    mapped = SPACY_LABEL_TYPES.get(label)
    if mapped is None:
        return None
    if not technical:
        if is_unmistakably_code(name) or (
            mapped in _PLACE_OR_PERSON and _named_like_software(name)
        ):
            return CODE_TYPE
        return mapped
    if is_code_shaped(name):
        return CODE_TYPE
    words = words_of(name)
    if mapped == FALLBACK_TYPE:
        return mapped  # languages and nationalities ("Bulgarian", "Greek") are no software
    if len(words) == 1:
        # No place either: "in Python", "in UTF-8", "in C++" are what technical text
        # puts after "in" (the documentation crawl made 39 such "places", 2 of them real).
        proper = name.casefold() not in lowercase and (len(words[0]) > 1 or "+" in name)
        return CODE_TYPE if proper else FALLBACK_TYPE
    common = all(is_dictionary_word(w) for w in words)
    if mapped == "person":
        return "person" if _full_name(words, lowercase) else FALLBACK_TYPE
    if mapped == "location":
        versioned = any(c.isdigit() for c in name)  # "Python 2.0", "Tk 8.6a"
        return "location" if locative and not common and not versioned else FALLBACK_TYPE
    if mapped == "organization":
        said = any(w.casefold() in ORGANIZATION_WORDS for w in words)
        return "organization" if said else FALLBACK_TYPE
    if mapped == "product":
        return CODE_TYPE
    return mapped


_PLACE_OR_PERSON = frozenset(("location", "person"))
# An acronym grown onto a word ("HarbourSQL", "LibreCAD", "iOS"-like): how software and
# formats are named, never places or people ("McAllen", "DeKalb" have one capital inside).
_ACRONYM_HUMP = re.compile(r"^[A-Za-z]*[a-z][A-Z]{2,}[A-Za-z0-9]*$")


def _named_like_software(name: str) -> bool:
    """Whether a one-word name is shaped as only software is: the same product's name was a
    place in prose that had no code and a technology everywhere else (two entities)."""
    return bool(_ACRONYM_HUMP.match(name))


def _full_name(words: list[str], lowercase: Collection[str]) -> bool:
    """Given and family names: capitalised words (particles like "van" aside), none of them
    a word the text writes in lower case, none in code's CamelCase ("Faster CPython")."""
    named = [w for w in words if w.casefold() not in NAME_PARTICLES]
    return len(named) >= 2 and all(
        w[:1].isupper() and w.casefold() not in lowercase and not any(c.isupper() for c in w[1:])
        for w in named
    )


def active_type(wanted: str, active: set[str]) -> str | None:
    """`wanted` when the workspace has it, else the fallback type when it has that."""
    if wanted in active:
        return wanted
    return FALLBACK_TYPE if FALLBACK_TYPE in active else None
