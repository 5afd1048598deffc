"""Normalisation (knowledge/consolidation/names/normalise.py): canonical keys, corporate
suffixes and names spelled alike. Pure functions: no database."""

from __future__ import annotations

import pytest

from knowledge.canonical import canonical_name
from knowledge.consolidation.names.normalise import (
    DEFAULT_CORPORATE_SUFFIXES,
    canonical_key,
    same_spelling,
    suffixes_for_type,
)

# --- canonical_key ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "key"),
    [
        # Unicode: NFKC (full-width), accents, letters NFKD leaves alone
        ("\uff29\uff22\uff2d", "ibm"),  # full-width "IBM"
        ("Zürich", "zurich"),
        ("Société Générale", "societe generale"),
        ("Łódź", "lodz"),
        ("Søren Kierkegaard", "soren kierkegaard"),
        # "&", punctuation, whitespace
        ("AT&T", "at and t"),
        ("AT and T", "at and t"),
        ("Procter  &  Gamble", "procter and gamble"),
        ("Hewlett-Packard", "hewlett packard"),
        ("TCP/IP", "tcp ip"),
        ("Yahoo!", "yahoo"),
        ("McDonald's", "mcdonald"),
        # technical tokens stay recognisable
        ("C++", "c++"),
        ("C#", "c#"),
        (".NET", ".net"),
        ("Node.js", "node.js"),
        ("ASP.NET", "asp.net"),
        ("GPT-3.5", "gpt 3.5"),
        # dotted initials are one token
        ("I.B.M.", "ibm"),
        ("J.R.R. Tolkien", "jrr tolkien"),
        ("U.S. Steel", "us steel"),
        # one leading article, only when something follows
        ("The Beatles", "beatle"),
        ("the Hague", "hague"),
        ("Le Monde", "monde"),
        ("Die Zeit", "zeit"),
        ("The The", "the"),
        ("The", "the"),
        ("A. Smith", "a smith"),  # an initial, not an article
        ("LA Lakers", "la laker"),  # an acronym, not an article
        ("THE BEATLES", "beatle"),  # all capitals: case says nothing
        # corporate suffixes, repeatedly, only when something remains
        ("Apple Inc.", "apple"),
        ("Acme Holdings Inc.", "acme"),
        ("Sony Group Corporation", "sony"),
        ("Société Générale S.A.", "societe generale"),
        ("Smith & Co.", "smith"),
        ("Inc.", "inc"),
        ("The Company", "company"),
        ("Group Inc.", "group"),
        # abbreviations
        ("St. Louis", "saint louis"),
        ("Main St.", "main street"),
        ("Mt. Everest", "mount everest"),
        # plurals, last word only
        ("Transformers", "transformer"),
        ("Companies", "company"),
        ("Processes", "process"),
        ("Boxes", "box"),
        ("Churches", "church"),
        ("Wishes", "wish"),
        ("Viruses", "virus"),
        ("Databases", "database"),
        ("Economies of Scale", "economies of scale"),
        ("Glass", "glass"),
        ("Status", "status"),
        ("Analysis", "analysis"),
        ("Gas", "gas"),
        ("Series", "series"),
        ("Physics", "physics"),
        # acronyms keep their S; "APIs" is a plural
        ("AWS", "aws"),
        ("NASA", "nasa"),
        ("macOS", "macos"),
        ("APIs", "api"),
        ("GPUs", "gpu"),
        # an identifier's "s" is part of it
        ("get_config_vars", "get config vars"),
        ("data_files", "data files"),
        ("sysconfig.get_config_vars()", "sysconfig.get config vars"),
        # nothing to keep
        ("", ""),
        ("   ", ""),
        ("!!!", ""),
    ],
)
def test_canonical_key(name, key):
    assert canonical_key(name) == key


def test_canonical_key_options_are_keyword_only_and_control_suffixes():
    assert canonical_key("Apple Inc.", strip_suffixes=False) == "apple inc"
    assert canonical_key("Apple Inc.", suffixes=()) == "apple inc"
    assert canonical_key("Telenor ASA", suffixes=("asa",)) == "telenor"
    assert canonical_key("Lie group", suffixes=suffixes_for_type("concept")) == "lie group"
    assert canonical_key("Lie group") == "lie"  # the default strips "group"
    with pytest.raises(TypeError):
        canonical_key("Apple Inc.", (), True)  # type: ignore[call-arg]


def test_canonical_key_is_deterministic_and_leaves_canonical_name_alone():
    names = ["Acme Holdings Inc.", "The Beatles", "Zürich", "AT&T", "iPhone 14 Pro"]
    assert [canonical_key(n) for n in names] == [canonical_key(n) for n in names]
    # The simple exact-match key of knowledge/canonical.py keeps its own, simpler rules.
    assert canonical_name("Apple Inc.") == "apple inc"
    assert canonical_name("The Beatles") == "the beatles"


def test_corporate_suffixes_include_group_and_holdings_on_purpose():
    assert {"group", "holdings", "s.a.", "gmbh", "kk"} <= set(DEFAULT_CORPORATE_SUFFIXES)
    assert suffixes_for_type("organization") == DEFAULT_CORPORATE_SUFFIXES
    assert suffixes_for_type("person") == ()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("FileHandler", "FileHandler"),
        ("`FileHandler`", "FileHandler"),
        ("zip()", "zip"),
        ("The Mock Class", "Mock Class"),
        ("Global  Interpreter Lock", "Global Interpreter Lock"),
    ],
)
def test_names_spelled_alike(a, b):
    assert same_spelling(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    # One canonical key, different things: the case tells code names apart.
    [("GET", "get()"), ("ZIP", "zip()"), ("PosixPath", "posixpath"), ("exit()", "_exit")],
)
def test_names_with_one_key_but_another_case_are_not_spelled_alike(a, b):
    assert canonical_key(a) == canonical_key(b)
    assert not same_spelling(a, b)
