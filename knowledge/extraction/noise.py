"""Which extracted names are noise: the rules the offline extractor rejects names by, and the
near-misses a person should look at.

Why a module of its own: the extractor applies `rejection` to every candidate name, and the
quality report (knowledge/selectors/quality.py) lists the entities `near_miss` flags, so the
two must agree on one set of rules. Everything here is a pure function of the name (plus a
dictionary of common English words), so a rule can be tested on its own and a near-miss is
explainable in one short phrase.

The noise classes, each found in real documentation crawls: code fragments with operators
("Constant(value=1", "x == y"), unbalanced brackets, version strings ("3.11.2", "v2.0"),
language keywords and literals ("False", "None", "def"), lowercase dictionary words
("module", "convert"), names with no letters, and overlong spans. What depends on the
sentence (a capitalised verb that starts it, "Convert the value …") is decided by the
extractor, which sees the parse; this module only knows the word list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from knowledge.extraction.spacy_model import lemma_lookups_dir

MAX_NAME_CHARS = 100
MAX_NAME_WORDS = 8

# Keywords and literals of the languages documentation is most often about. Literals are
# matched case-sensitively as written ("None", "True"); keywords in any case when the name
# is a single word.
LITERALS = frozenset(
    {"True", "False", "None", "NaN", "Null", "NULL", "null", "nil", "undefined", "Infinity"}
)
KEYWORDS = frozenset(
    (
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "case",
        "class",
        "const",
        "continue",
        "def",
        "del",
        "elif",
        "else",
        "except",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "from",
        "function",
        "global",
        "if",
        "import",
        "in",
        "is",
        "lambda",
        "let",
        "match",
        "new",
        "nonlocal",
        "not",
        "or",
        "pass",
        "raise",
        "return",
        "self",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "cls",
        "args",
        "kwargs",
    )
)
# Words documentation sites print around the content (menus, footers, admonitions). They
# are rejected only as a whole name: "Navigation" is noise, "Kestrel Navigation System" not.
SITE_WORDS = frozenset(
    (
        "navigation",
        "contents",
        "index",
        "search",
        "home",
        "menu",
        "previous",
        "next",
        "topic",
        "up",
        "top",
        "back",
        "skip",
        "note",
        "notes",
        "warning",
        "tip",
        "hint",
        "important",
        "caution",
        "danger",
        "attention",
        "seealso",
        "see",
        "also",
        "example",
        "examples",
        "output",
        "source",
        "table",
        "figure",
        "page",
        "chapter",
        "section",
        "edit",
        "share",
        "print",
        "copyright",
        "license",
        "feedback",
    )
)

# Labels of admonition boxes, which run into the box's first sentence ("Important Save a
# reference to …"); as a name's first word they mean the name is that run-on.
ADMONITIONS = frozenset(
    ("note", "warning", "important", "tip", "hint", "caution", "danger", "attention", "seealso")
)
_PATH = re.compile(r"\w/\S*\.\w{1,5}\b|^[~.]?/\w")
_TIME = re.compile(r"\d:\d")
_BRACKET_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))
# Operators that occur in code but not in names ("C++", "C#", "TCP/IP", "AT&T" are names;
# "&" and "/" and "+" are therefore allowed, "++" only at the end).
_OPERATOR = re.compile(r"==|!=|<=|>=|->|=>|:=|\*\*|//|[=<>;{}|\\$%^~]|\+(?!\+?$)|\*")
_VERSION = re.compile(r"^(?:v(?:ersion)?\s*)?\d+(?:[._-]\d+)*(?:[a-z]{1,5}\d*)?\+?$", re.I)
# An identifier as code spells it: dotted segments, optionally called ("os.path.join()").
CODE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")  # noqa: RUF001 (typographic apostrophe)
_LETTER = re.compile(r"[^\W\d_]")
# What a tokenizer splits off a word ("n't", "'s", "'ll"), with either apostrophe.
_CONTRACTION = re.compile(r"^(?:\w*n['’]t|['’](?:s|re|ll|ve|d|m))$", re.I)  # noqa: RUF001


def words_of(name: str) -> list[str]:
    return _WORD.findall(name)


@lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    """Common English words: the WordNet lemma index shipped with the offline extractor's
    spaCy package (nouns, verbs, adjectives, adverbs), read without loading the pipeline.
    Empty when the package is not installed: then only the other rules apply."""
    try:
        from spacy.lookups import Lookups

        lookups = Lookups().from_disk(lemma_lookups_dir())
        table = lookups.get_table("lemma_index")
    except Exception:  # the extractor reports the broken install; here it is only a bonus
        return frozenset()
    return frozenset(word for words in table.values() for word in words if word.isalpha())


@lru_cache(maxsize=1)
def _verbs() -> frozenset[str]:
    """WordNet's verb lemmas (the same index as `_dictionary`); empty when not installed."""
    try:
        from spacy.lookups import Lookups

        table = Lookups().from_disk(lemma_lookups_dir()).get_table("lemma_index")
        return frozenset(word for word in table["verb"] if word.isalpha())
    except Exception:  # as for _dictionary: the extractor reports a broken install
        return frozenset()


def is_verb_lemma(lemma: str) -> bool:
    """Whether a lemma is an English verb's ("acquire", "take"), so a relation typed by it
    names an action: not a truncated word the lemmatizer made up ("une") nor an adjective
    the tagger took for a verb ("unique"). True when the word list is not installed."""
    verbs = _verbs()
    return not verbs or lemma.casefold() in verbs


def is_dictionary_word(word: str) -> bool:
    """Whether a word (any case) is a common English word or a regular inflection of one."""
    lower = word.casefold()
    dictionary = _dictionary()
    if lower in dictionary:
        return True
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"),
                                ("ing", ""), ("ing", "e"), ("ly", "")):  # fmt: skip
        stem = lower[: -len(suffix)] + replacement
        if lower.endswith(suffix) and len(lower) > len(suffix) + 2 and stem in dictionary:
            return True
    return False


def unbalanced(name: str) -> bool:
    return any(name.count(open_) != name.count(close) for open_, close in _BRACKET_PAIRS)


def rejection(name: str) -> str | None:
    """Why `name` is not an entity name, or None when no rule rejects it."""
    stripped = name.strip()
    if not _LETTER.search(stripped):
        return "no letters"
    if len(stripped) > MAX_NAME_CHARS or len(stripped.split()) > MAX_NAME_WORDS:
        return "too long"
    if unbalanced(stripped):
        return "unbalanced brackets"
    if _OPERATOR.search(stripped):
        return "code fragment"
    if _VERSION.match(stripped):
        return "version string"
    if _PATH.search(stripped):
        return "file path"
    digits = sum(ch.isdigit() for ch in stripped)
    if _TIME.search(stripped) or digits * 3 > len(stripped.replace(" ", "")):
        return "mostly digits"
    if (
        " " in stripped
        and words_of(stripped)[:1]
        and words_of(stripped)[0].casefold() in (ADMONITIONS)
    ):
        return "admonition"
    if stripped in LITERALS or (" " not in stripped and stripped.casefold() in KEYWORDS):
        return "keyword or literal"
    if stripped.casefold() in SITE_WORDS or _all_site_words(stripped):
        return "site navigation word"
    if stripped.islower() and " " not in stripped and is_dictionary_word(stripped):
        return "lowercase dictionary word"
    if _CONTRACTION.match(stripped):
        return "contraction"
    return None


def _all_site_words(name: str) -> bool:
    words = [w.casefold() for w in words_of(name) if w.casefold() not in _SMALL_WORDS]
    return bool(words) and len(words) <= 3 and all(w in SITE_WORDS for w in words)


def near_miss(name: str) -> str | None:
    """Why a name that passed `rejection` still looks like noise, or None.

    These are the cases the rules deliberately let through because they are sometimes real
    (a capitalised common word can be a product, a lowercase word a module), so a person
    decides: the quality report lists them with one-click delete and block.
    """
    if rejection(name) is not None:
        return None
    if CODE_NAME.match(name) and ("." in name or "_" in name):
        return None  # a dotted or snake_case identifier says what it is
    # Acronyms are no dictionary words ("IP", "TCP"), whatever the word list says.
    words = [w for w in words_of(name) if not (w.isupper() and len(w) > 1)]
    if not words:
        return None
    if len(words) == 1:
        word = words[0]
        if is_dictionary_word(word):
            return "common word" if word[0].isupper() else "lowercase word"
        if len(word) <= 2:
            return "very short"
        return None
    if all(is_dictionary_word(w) or w.casefold() in _SMALL_WORDS for w in words):
        return "common words only"
    if any(ch.isdigit() for ch in name):
        return "contains digits"
    return None


_SMALL_WORDS = frozenset(
    ("a", "an", "the", "of", "and", "or", "to", "in", "on", "for", "by", "with", "at", "from")
)


def filter_names(names: Iterable[str]) -> list[str]:
    """The names no rule rejects, in order (for callers that only need the survivors)."""
    return [n for n in names if rejection(n) is None]
