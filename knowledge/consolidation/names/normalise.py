"""Normalisation: the canonical key two spellings of one name share, the tokens it is built
from, and the letter-case-preserving spelling `same_spelling` compares.

A name is cleaned (NFKC, accents, apostrophes, "&"), cut into tokens that keep technical
names whole ("c++", ".net", "node.js", dotted initials), and reduced to a key: one leading
article, the spelled-out abbreviations, corporate suffixes and a simple plural of the last
word aside. Every other rule family starts from these tokens.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from knowledge.consolidation.names.words import _ARTICLES, _words

# Legal-form words dropped from the end of a name ("Acme Holdings Inc." -> "acme"), matched as
# whole tokens after the same normalisation as names ("S.A." and "s.a." are the token "sa").
# "group" and "holdings" are here on purpose: "Volkswagen Group", "Sony Group Corporation" and
# "HSBC Holdings" are what texts call "Volkswagen", "Sony" and "HSBC". The cost: a group and
# its namesake operating company get one key, and so do generic names that end in the word
# ("Research Group" -> "research"), which is why only organisations strip suffixes in scoring
# (`suffixes_for_type`), and why a suffix is dropped only when something is left.
DEFAULT_CORPORATE_SUFFIXES: tuple[str, ...] = (
    "inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "llc",
    "plc", "gmbh", "ag", "sa", "s.a.", "nv", "bv", "ab", "oy", "as", "spa", "srl", "pty", "kk",
    "holdings", "group",
)  # fmt: skip


# Abbreviations expanded in keys so "St. Louis" and "Saint Louis" meet. "st" is "saint"
# first in a name and "street" elsewhere ("Main St.").
_ABBREVIATIONS = {
    "mt": "mount",
    "ft": "fort",
    "univ": "university",
    "intl": "international",
    "natl": "national",
    "dept": "department",
    "assn": "association",
    "inst": "institute",
    "govt": "government",
}
# Last words that look plural but are not, or whose singular the rules would get wrong.
_NOT_PLURAL = _words(
    "series species news means headquarters physics mathematics economics politics ethics"
    " statistics analytics linguistics robotics genetics electronics graphics logistics"
    " athletics"
)
_NUMBER_WORDS = {
    word: value
    for value, words in enumerate(
        [
            ("zero",),
            ("one", "first"),
            ("two", "second"),
            ("three", "third"),
            ("four", "fourth"),
            ("five", "fifth"),
            ("six", "sixth"),
            ("seven", "seventh"),
            ("eight", "eighth"),
            ("nine", "ninth"),
            ("ten", "tenth"),
            ("eleven", "eleventh"),
            ("twelve", "twelfth"),
        ]
    )
    for word in words
}
# Roman numerals up to 399 (no D or M: "DC", "MD" are initials far more often than numbers).
_ROMAN = re.compile(r"^(c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}


_APOSTROPHES = str.maketrans(dict.fromkeys("'\u2019\u2018\u02bc`\u00b4", ""))
# Letters NFKD does not decompose into a base letter and a combining mark.
_LETTERS = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "Th",
        "\u0131": "i",  # dotless i
    }
)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
# Tokens. Punctuation separates tokens except where it is part of a recognisable name:
# - dotted initials are one token without the dots: "I.B.M." -> "ibm", "U.S." -> "us";
# - a dot between letters or digits stays: "node.js", "asp.net", "3.5";
# - a dot at the start of a word followed by a letter stays: ".net";
# - "+", "++" or "#" right after a word stays: "c++", "c#", "notepad++", "disney+".
# Apostrophes are deleted before ("McDonald's" -> "mcdonalds", "O'Reilly" -> "oreilly") and
# "&" becomes " and " ("AT&T" -> "at and t").
_TOKEN = re.compile(
    r"(?P<initials>(?<![^\W_])[^\W\d_](?:\.[^\W\d_])+\.?(?![^\W_]))"
    r"|(?P<word>(?:(?<![^\W_.])\.(?=[^\W\d_]))?[^\W_]+(?:\.[^\W_]+)*(?:\+\+|\+|#)?)"
)


@dataclass(frozen=True, slots=True)
class _Token:
    key: str  # casefolded, accent-free
    original: str  # as written, after NFKC and accent stripping
    acronym: bool  # written in capitals ("AWS") or as dotted initials ("I.B.M.")
    dotted: bool  # followed by a dot ("J.", "Inc.")


def _clean(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).translate(_LETTERS)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    text = _THOUSANDS.sub("", text)
    return text.replace("&", " and ")


# What `same_spelling` sets aside: quotes and backticks around a name, a call's "()".
_QUOTES = "`'\"\u2018\u2019\u201c\u201d"
_CALL = re.compile(r"\(\s*\)$")


def same_spelling(a: str, b: str) -> bool:
    """Whether two names are written alike, letter case included, apart from quotes, a
    call's "()" and a leading article ("FileHandler" and "`FileHandler`", "The Mock Class"
    and "Mock Class"). Names with one canonical key can still be different things when
    their case differs, above all in code: "GET" and "get()", "ZIP" and "zip()",
    "PosixPath" and "posixpath" (bench/doc_quality.py homonyms)."""
    return _spelling(a) == _spelling(b)


def _bare(name: str) -> str:
    """The name without the quotes around it and a call's "()"."""
    return _CALL.sub("", name.strip().strip(_QUOTES).strip())


def _spelling(name: str) -> str:
    text = _bare(unicodedata.normalize("NFKC", name))
    first, _, rest = text.partition(" ")
    if rest and first.casefold() in _ARTICLES:
        text = rest
    return " ".join(text.split())


def _tokens(name: str) -> list[_Token]:
    """The tokens of a name, before articles, suffixes and plurals are dealt with."""
    text = _clean(name)
    shouting = not any(c.islower() for c in text) and len(text.split()) > 1
    out: list[_Token] = []
    for match in _TOKEN.finditer(text):
        raw = match.group()
        dotted = text[match.end() : match.end() + 1] == "."
        if match.group("initials") is not None:
            joined = raw.replace(".", "")
            out.append(_Token(joined.casefold(), joined, acronym=True, dotted=True))
            continue
        letters = [c for c in raw if c.isalpha()]
        acronym = (
            sum(c.isupper() for c in letters) >= 2
            and not any(c.islower() for c in letters)
            and not (shouting and len(letters) > 5)  # "THE BEATLES": case says nothing
        )
        out.append(_Token(raw.casefold(), raw, acronym=acronym, dotted=dotted))
    return out


@lru_cache(maxsize=64)
def _suffix_tokens(suffixes: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    found = {tuple(t.key for t in _tokens(s)) for s in suffixes}
    return tuple(sorted((s for s in found if s), key=len, reverse=True))


def _singular(token: _Token) -> _Token:
    """The last word without a simple English plural ending (see `canonical_key`)."""
    word, original = token.key, token.original
    if not word.isalpha() or word in _NOT_PLURAL or not word.endswith("s"):
        return token
    if re.fullmatch(r"[A-Z]{2,}s", original):  # "APIs", "GPUs", "LLMs"
        return _Token(word[:-1], original[:-1], acronym=True, dotted=token.dotted)
    if token.acronym or (original.endswith("S") and not original.isupper()):
        return token  # "AWS", "macOS": a capital S is no plural (but "THE BEATLES" has one)
    if len(word) > 4 and word.endswith("ies"):
        stem = word[:-3] + "y"
    elif word.endswith(("sses", "uses", "xes", "ches", "shes", "zzes")):
        stem = word[:-2]
    elif len(word) > 3 and not word.endswith(("ss", "us", "is")):
        stem = word[:-1]  # "databases" -> "database", like any other trailing "s"
    else:
        return token
    return _Token(stem, original, acronym=False, dotted=token.dotted)


def _expand(token: _Token, *, first: bool) -> _Token:
    if token.key == "st":
        return _Token("saint" if first else "street", token.original, False, token.dotted)
    if token.key in _ABBREVIATIONS:
        return _Token(_ABBREVIATIONS[token.key], token.original, False, token.dotted)
    return token


def _key_tokens(name: str, suffixes: Iterable[str], *, strip_suffixes: bool) -> list[_Token]:
    tokens = _tokens(name)
    if not tokens:
        return []
    shouting = not any(c.islower() for c in name)
    first = tokens[0]
    if (
        len(tokens) > 1
        and first.key in _ARTICLES
        and not (first.dotted and len(first.key) == 1)  # "A. Smith": an initial
        and not (first.acronym and not shouting)  # "LA Lakers": an acronym
    ):
        tokens = tokens[1:]
    tokens = [t if t.acronym else _expand(t, first=i == 0) for i, t in enumerate(tokens)]
    if strip_suffixes:
        suffix_list = _suffix_tokens(tuple(suffixes))
        stripped = True
        while stripped:
            stripped = False
            keys = tuple(t.key for t in tokens)
            for suffix in suffix_list:
                if len(keys) > len(suffix) and keys[-len(suffix) :] == suffix:
                    tokens = tokens[: -len(suffix)]
                    if len(tokens) > 1 and tokens[-1].key == "and":  # "Smith & Co."
                        tokens = tokens[:-1]
                    stripped = True
                    break
    if "_" not in name:  # "get_config_vars" is not "get_config_var": see `_Side.of`
        tokens[-1] = _singular(tokens[-1])
    return tokens


def canonical_key(
    name: str,
    *,
    suffixes: Iterable[str] = DEFAULT_CORPORATE_SUFFIXES,
    strip_suffixes: bool = True,
) -> str:
    """The form two spellings of one name share: "Apple Inc." and "apple" are both "apple".

    In order: Unicode NFKC; accents stripped (NFKD without combining marks, plus ø, æ, œ,
    ł, đ, þ and the dotless i); apostrophes deleted; "&" read as "and"; punctuation turned
    into spaces except inside technical tokens (see `_TOKEN`: "c++", "c#", ".net",
    "node.js", "3.5" stay, and dotted initials "I.B.M." become "ibm"); casefold; whitespace
    collapsed. Then:

    - one leading article (the, a, an, le, la, les, der, die, das, el) is dropped when more
      follows, unless it is an initial ("A. Smith") or an acronym in a mixed-case name ("LA
      Lakers"); "The The" stays "the";
    - the abbreviations mt, ft, univ, intl, natl, dept, assn, inst, govt and st (saint
      first, street elsewhere) are spelled out, so "St. Louis" meets "Saint Louis";
    - trailing corporate suffixes are dropped repeatedly while something is left ("Acme
      Holdings Inc." -> "acme", "Inc." stays "inc");
    - the last word, and only it, loses a simple English plural: "-ies" -> "y"; "-sses",
      "-uses", "-xes", "-ches", "-shes" lose "es"; any other "s" goes when the word is longer
      than 3 letters and does not end in "ss", "us" or "is". Other "-ses" words
      deliberately lose only the "s" ("databases" -> "database", not "databas"). Acronyms
      keep their S ("AWS", "NASA"; "macOS": a capital S in a mixed-case word is no plural)
      except the "APIs" pattern, capitals then a lowercase s; a few words are never plural
      ("series", "news", "physics"). A name with an underscore keeps it: in an identifier
      the "s" is part of the name ("get_config_vars" and "get_config_var" are two
      functions, "data_files" and "data_file" two settings).

    Deterministic, never raises; an empty or punctuation-only name gives "". Callers that
    store the key truncate it to their column.
    """
    tokens = _key_tokens(name, suffixes, strip_suffixes=strip_suffixes)
    return " ".join(t.key for t in tokens)


def _number_value(token: _Token, index: int) -> str | None:
    """The number a token stands for: digits, number words, capital Roman numerals after the
    first word ("World War II", not "I. Newton"); None for anything else."""
    key = token.key
    if any(c.isdigit() for c in key):
        return str(int(key)) if key.isdigit() else key
    if key in _NUMBER_WORDS:
        return str(_NUMBER_WORDS[key])
    roman = _ROMAN.match(key) and (len(key) > 1 or key in "ivx")  # "Vitamin C" is no 100
    if index > 0 and not token.dotted and token.original.isupper() and roman:
        total, previous = 0, 0
        for c in reversed(key):
            value = _ROMAN_VALUES[c]
            total += -value if value < previous else value
            previous = max(previous, value)
        return str(total)
    return None


def _loose(key: str) -> str:
    """A key without spaces, without dots before letters, and without a trailing "js",
    ".com" or ".org": "Node.js", "NodeJS" and "node" meet, so do "Face book" and "Facebook",
    "ASP.NET" and "ASP .NET", "Amazon.com" and "Amazon"."""
    text = re.sub(r"\.(com|org)$", "", key)
    text = re.sub(r"\.(?=[^\W\d_])", "", text).replace(" ", "")
    if text.endswith("js") and len(text) >= 5:
        text = text[:-2]
    return text


def suffixes_for_type(entity_type: str) -> tuple[str, ...]:
    """The corporate suffixes to strip for a type: organisations only.

    Elsewhere the words mean something: "Lie group" is a concept, "Windows Group Policy" a
    technology, "Day Spa" a place.
    """
    return DEFAULT_CORPORATE_SUFFIXES if entity_type == "organization" else ()
