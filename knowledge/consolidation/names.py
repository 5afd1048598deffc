"""Name matching for entity consolidation: canonical keys, blocking keys and a similarity score.

Extraction writes the names it finds as they were written: "Apple Inc.", "Apple", "APPLE";
"IBM" and "International Business Machines"; "Zürich" and "Zurich"; "Microsft". Exact
matching on `knowledge.canonical.canonical_name` keeps those apart, which clutters the graph,
while merging too eagerly ("Java" into "JavaScript", "iPhone 14" into "iPhone 15") corrupts
it, and a wrong merge is worse than a missed one. This module is the pure, deterministic part
of consolidation, with no Django and no database, so it is cheap to test and to benchmark
(bench/consolidation_quality.py, against tests/fixtures/entity_pairs.jsonl):

- `canonical_key`: a more aggressive normal form than `canonical_name` (accents, `&`, most
  punctuation, leading articles, corporate suffixes, simple plurals). Equal keys mean "the
  same name written differently".
- `blocking_keys`: a handful of strings per name, stored in an array column with a GIN
  index, so that candidate pairs are found with one `&&` query instead of comparing every
  name with every other.
- `name_similarity`: a score in 0..1 with human-readable reasons for a candidate pair.
- `Thresholds` / `TYPE_THRESHOLDS`: per entity type, the score from which a pair is merged
  automatically and the band below it that goes to a person for review.

Corporate suffixes only mean something for organisations ("Lie group" is not the
mathematician Lie), so callers pass `suffixes=suffixes_for_type(entity_type)`; the plain
default strips them, which is also what blocking wants (it only finds candidates).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

__all__ = [
    "ACRONYM_REASON",
    "DEFAULT_CORPORATE_SUFFIXES",
    "DEFAULT_THRESHOLDS",
    "MAX_BLOCKING_KEYS",
    "QUALIFIED_REASON",
    "QUALIFIED_SCORE",
    "TYPE_THRESHOLDS",
    "UNSURE_SCORE",
    "Similarity",
    "Thresholds",
    "acronym_expansion",
    "acronym_of",
    "blocking_keys",
    "canonical_key",
    "code_paths_differ",
    "looks_like_acronym",
    "name_similarity",
    "same_spelling",
    "shorter_form",
    "suffixes_for_type",
    "thresholds_for",
]

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


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The most blocking keys a name gets (the array column stays small, the `&&` query fast).
MAX_BLOCKING_KEYS = 24
# Tokens of a name that contribute keys of their own (the longest, i.e. most distinctive).
_MAX_BLOCKING_TOKENS = 6

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
# Words that, present in one name and not the other, make a different entity: "South Korea"
# / "Korea", "New York" / "York", "iPhone 14 Pro" / "iPhone 14", "John Smith Jr." / "John Smith".
_QUALIFIERS = (
    _words("new old north south east west northern southern eastern western upper lower")
    | _words("pro max mini plus ultra lite air se")  # product variants
    | _words("women womens men mens youth jr junior sr senior")
    | _words("not non semi anti pre post sub")  # "semi-supervised", "Attention Is Not ..."
)
# Frequent words that would make a blocking key match half the graph; the full key and the
# other words still block such names.
_GENERIC = _words(
    "university college institute school international national company bank group"
    " association society foundation department ministry state city republic united"
    " new north south east west"
)
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
# Word beginnings that mean opposites: "hypertension" / "hypotension" is no typo.
_CONTRASTS = (("hyper", "hypo"), ("inter", "intra"), ("micro", "macro"))

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
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
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


_DOTTED_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def code_paths_differ(a: str, b: str) -> str | None:
    """Why two code names are two things whatever their embeddings say, or None: one is the
    other's dotted parent ("pickle" / "pickle.Pickler"), they are two members of one
    namespace ("itertools.dropwhile" / "itertools.takewhile"), members of two namespaces
    ("asyncio.Queue" / "queue.Queue"), or two other identifiers ("PyObject_GenericGetAttr" /
    "PyObject_GenericSetAttr", "RawIOBase" / "io.RawIOBase.read"). Their names embed close
    because they share a path, a prefix or a member's name; on the Python manual 2,909 of
    the 5,088 pairs the name embedding queued for review were of the first two kinds (bench/
    doc_quality.py review). Still a question: a qualified name and a shorter form of it
    ("Decimal" / "decimal.Decimal", "ConfigParser.read" / "configparser.ConfigParser.read":
    one path ends with the other, ignoring case), and identifiers with the same letters
    once underscores and dots are ignored ("is_alive" / "isAlive")."""
    path_a, path_b = _code_path(a), _code_path(b)
    if path_a is None or path_b is None or path_a == path_b:
        return None
    short, long = sorted((path_a, path_b), key=len)
    if len(long) > 1 and long[: len(short)] == short:
        return "a dotted parent and its member"
    if len(path_a) == len(path_b) > 1 and path_a[:-1] == path_b[:-1]:
        return "two members of one namespace"
    folded = sorted(([p.casefold() for p in path_a], [p.casefold() for p in path_b]), key=len)
    if folded[1][-len(folded[0]) :] == folded[0]:
        return None
    if len(folded[0]) > 1:
        return "members of two namespaces"
    if _is_identifier(_bare(a)) and _is_identifier(_bare(b)) and not _loose_letters(a, b):
        return "two code names"
    return None


def shorter_form(a: str, b: str) -> str | None:
    """The shorter of two code names when the longer is it, qualified: "SkipTest" /
    "unittest.SkipTest", "TarFile.list" / "tarfile.TarFile.list"; else None. A manual writes
    an API name in full where it is defined and shorter where it is used. One word is a
    shorter form only when shaped as an identifier (underscores, a capital inside): "open"
    is the built-in as often as "os.open", "Logger" any logger. On the Python manual, 537
    open review pairs were such (with no other qualified name ending the same way), and
    78 of 80 sampled were one thing ("sysconfig.get_config_var" is not
    "distutils.sysconfig.get_config_var", nor "datetime.tzinfo" "datetime.datetime.tzinfo")."""
    path_a, path_b = _code_path(a), _code_path(b)
    if path_a is None or path_b is None or len(path_a) == len(path_b):
        return None
    short, long = sorted((path_a, path_b), key=len)
    if long[-len(short) :] != short or (len(short) == 1 and not _is_identifier(short[0])):
        return None
    return ".".join(short)


def repeats_its_module(a: str, b: str) -> bool:
    """Whether the longer of two code names is the shorter with the shorter's first part put
    in front again: "datetime.datetime.date" of "datetime.date", "socket.socket.recv" of
    "socket.recv". A module and its class share a name there, so the shorter name is either
    the class's member written short (`socket.recv`, the method) or a member of the module in
    full (the class `datetime.date`, which is not the method `datetime.datetime.date`).
    Callers tell the two apart by whether the shorter name has members of its own."""
    path_a, path_b = _code_path(a), _code_path(b)
    if path_a is None or path_b is None:
        return False
    short, long = sorted((path_a, path_b), key=len)
    return len(short) >= 2 and long == [short[0], *short]


def _loose_letters(a: str, b: str) -> bool:
    return _loose(canonical_key(a)) == _loose(canonical_key(b))


def _code_path(name: str) -> list[str] | None:
    text = _bare(name)
    return text.split(".") if _DOTTED_IDENTIFIER.fullmatch(text) else None


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


LOOSE_REASON = "same letters ignoring spacing and punctuation"


def _spelled_as_code(name: str) -> bool:
    """A name whose underscores, dots or call parentheses are part of it: "get_value" and
    "getvalue", "set_trace" and "settrace", "http.server" and "HTTPServer", "COLOR_GREEN"
    and "Color.GREEN" are two things each (on the Python manual 77 code names had joined an
    entity spelled with other such marks, and about 10 of those were one thing: "is_alive" /
    "isAlive", "latin1" / "latin_1"), so such a pair is a question. A web address
    or a ".js" name is no code path here ("Node.js" / "NodeJS", "Amazon.com" / "Amazon")."""
    text = name.strip()
    if "_" in text or "(" in text:
        return True
    path = _code_path(text)
    return path is not None and len(path) > 1 and path[-1].casefold() not in _WEB_ENDINGS


_WEB_ENDINGS = frozenset({"js", "com", "org", "net", "io"})


def _significant(tokens: list[_Token]) -> list[str]:
    """Distinctive words: 3+ characters, no filler or generic word; dotted words also give
    their parts ("node.js" -> "node.js", "node")."""
    words: list[str] = []
    for token in tokens:
        parts = [token.key] + (token.key.strip(".").split(".") if "." in token.key else [])
        words.extend(w for w in parts if len(w) >= 3 and w not in _FILLER | _GENERIC)
    return words


def blocking_keys(name: str, *, suffixes: Iterable[str] = DEFAULT_CORPORATE_SUFFIXES) -> list[str]:
    """At most 24 strings; two names that may be one entity very probably share one.

    - the full canonical key: every variant `canonical_key` absorbs (case, accents,
      articles, suffixes, plurals, "&") meets here, whatever the length of the name; and
      the key without spaces, dots or a trailing "js" ("Node.js", "NodeJS", "Node" ->
      "node"; "Face book" -> "facebook"), which meets the full key of the other spelling;
    - each significant word (3+ letters, not a filler word like "of"/"the", not a generic
      one like "university"/"bank" that would match half the graph; a dotted word also gives
      its parts, "vue.js" -> "vue"), the longest six: names that differ by added or dropped
      words ("Harvard" / "Harvard University", "Tolkien" / "J. R. R. Tolkien") share one;
    - "p:" + the first 4 and "s:" + the last 4 letters of those words: a typo changes one
      or two neighbouring letters, so it usually leaves one end intact ("Microsft",
      "Gogle") -- and "Face book" / "Facebook" share "p:face";
    - "a:" + the acronym of a multi-word name (with and without its suffixes, "of", etc.)
      or of a camel-case word ("JavaScript" -> "a:js"), and for an acronym-looking name
      "a:" + its own letters ("I.B.M." -> "a:ibm", "3M" -> "a:mmm" too): an acronym shares
      no letters-in-a-row with its expansion, so this is the only way the two meet.

    Unrelated names rarely share a key: tokens are whole words, the prefixes and suffixes
    are four letters long, generic words are left out. What is missed: aliases with nothing
    in common ("Facebook" / "Meta Platforms", "Cologne" / "Köln"), and typos that hit both
    ends of a short word ("Telsa"). The order is stable and there are no duplicates.
    """
    tokens = _key_tokens(name, suffixes, strip_suffixes=True)
    key = " ".join(t.key for t in tokens)
    if not key:
        return []
    keys: list[str] = [key, _loose(key)]
    acronyms = sorted(_acronym_candidates(name, suffixes))
    if looks_like_acronym(name):
        acronyms.extend(sorted(_acronym_letters(name)))
    keys.extend(f"a:{a}" for a in acronyms)
    words = _significant(tokens)
    words = sorted(dict.fromkeys(words), key=lambda w: (-len(w), words.index(w)))
    for word in words[:_MAX_BLOCKING_TOKENS]:
        keys.append(word)
        keys.append(f"p:{word[:4]}")
        keys.append(f"s:{word[-4:]}")
    return list(dict.fromkeys(keys))[:MAX_BLOCKING_KEYS]


# --- similarity -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Similarity:
    """How alike two names are (0..1) and why, in words a reviewer can read."""

    score: float
    reasons: tuple[str, ...]


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
QUALIFIED_REASON = "a qualified name and its shorter form"
QUALIFIED_SCORE = 0.95
ACRONYM_SCORE = 0.93
# In every type's review band (concept's starts here), under every automatic merge (see
# TYPE_THRESHOLDS).
UNSURE_SCORE = 0.8


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


Bounds = tuple[float, float, str]  # the score is clamped into [low, high], for the reason

_IDENTIFIER_JOIN = re.compile(r"\w[._]\w|[a-z][A-Z]")


def _is_identifier(name: str) -> bool:
    """One code identifier, dotted, snake_case or CamelCase, written without spaces: its
    parts are not words a longer or shorter name may add or drop."""
    text = name.strip()
    return bool(text) and " " not in text and _IDENTIFIER_JOIN.search(text) is not None


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


# --- thresholds -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """Scores at or above `auto_merge` merge; scores in [review, auto_merge) are queued for
    a person; anything lower stays apart.

    How the values were chosen: `name_similarity` gives a few characteristic levels (1.0
    same key, 0.95 same letters or same words, 0.93 acronym, 0.9 typo, about 0.85 the same
    words in another order, 0.75..0.85 extra words in front or initials, at most 0.7 extra
    words after, 0.5 and below different words or numbers), so each type's thresholds are
    at one of those levels, picked with bench/consolidation_quality.py on the labelled pairs
    of tests/fixtures/entity_pairs.jsonl (precision of automatic merges first, then recall)
    and kept on a plateau: moving a threshold to the next level changes the decision for a
    whole kind of pair, not for a single labelled example.

    - auto_merge 0.9 (default, organization, location, concept, work): typos and acronyms
      merge. Going down to 0.85 also merges reordered names ("University of Washington" /
      "Washington University" are two universities) and extra words in front ("AI ethics" /
      "ethics"); going up to 0.93 loses every typo.
    - person 0.95: stricter. A one-letter difference is often another person ("Andersen" /
      "Anderson"), initials and surnames alone ("Einstein", "J. Smith") are for a person to
      confirm, so only spelling variants (accents, case, honorifics, "Smith, John") merge.
    - technology 0.93: acronyms merge ("JS", "LLM", "CNN"), typos do not: one letter is
      another technology more often than a slip ("OpenGL" / "OpenCL").
    - product 0.75: a maker's name in front is noise ("Adobe Photoshop" / "Photoshop",
      "Samsung Galaxy S23"), while variants (Pro, Max, numbers, words after) score 0.7 or
      less.
    - event 0.85: also merges the same words in another order ("Second World War" / "World
      War II", "financial crisis of 2008") and an organiser inserted ("2022 FIFA World Cup"
      / "World Cup 2022"); "Hurricane Katrina" / "Katrina" is still reviewed.
    - review 0.75 keeps the queue to extra words in front, initials and typos;
      organization (0.65) also queues a short name with words after it ("Harvard" /
      "Harvard University", "Toyota Motor Corporation" / "Toyota"), event (0.7) "Watergate" /
      "Watergate scandal", product (0.7) its variants with words after; concept (0.8)
      queues no single word against a longer phrase holding it: a concept's extra words
      make another concept ("Functions" / "Special functions", "Statements" / "Assignment
      statements": 832 of the 1,079 concept pairs open on the Python manual, all 40 of a
      sample two things; on the labelled pairs it drops one wrong pair from the queue),
      nor, with NARROWER_TYPES, a phrase against a longer one ("Structure" / "Data
      Structures": 222 more open pairs, 19 of the 20 concept pairs of a sample of 25 two
      things).
    """

    auto_merge: float
    review: float


DEFAULT_THRESHOLDS = Thresholds(auto_merge=0.9, review=0.75)
TYPE_THRESHOLDS: dict[str, Thresholds] = {
    "person": Thresholds(auto_merge=0.95, review=0.75),
    "organization": Thresholds(auto_merge=0.9, review=0.65),
    "location": Thresholds(auto_merge=0.9, review=0.75),
    "product": Thresholds(auto_merge=0.75, review=0.7),
    "technology": Thresholds(auto_merge=0.93, review=0.75),
    "concept": Thresholds(auto_merge=0.9, review=0.8),
    "event": Thresholds(auto_merge=0.85, review=0.7),
    "work": Thresholds(auto_merge=0.9, review=0.75),
}


def thresholds_for(entity_type: str) -> Thresholds:
    """The thresholds of a type; types without their own (custom ones) get the default."""
    return TYPE_THRESHOLDS.get(entity_type, DEFAULT_THRESHOLDS)


def suffixes_for_type(entity_type: str) -> tuple[str, ...]:
    """The corporate suffixes to strip for a type: organisations only.

    Elsewhere the words mean something: "Lie group" is a concept, "Windows Group Policy" a
    technology, "Day Spa" a place.
    """
    return DEFAULT_CORPORATE_SUFFIXES if entity_type == "organization" else ()
