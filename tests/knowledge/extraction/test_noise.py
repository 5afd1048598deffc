"""Every noise class the name rules reject, each beside the near-miss they must keep."""

from __future__ import annotations

import pytest

from knowledge.extraction.noise import near_miss, rejection


@pytest.mark.parametrize(
    ("noise", "reason", "kept"),
    [
        ("Constant(value=1", "unbalanced brackets", "Alphabet (Google)"),
        ("x == y", "code fragment", "C++"),
        ("a; b", "code fragment", "AT&T"),
        ("v3.11.2", "version string", "Python 3"),
        ("2.0", "no letters", "Web 2.0 Summit"),
        ("False", "keyword or literal", "Falsetto"),
        ("def", "keyword or literal", "Defra"),
        ("module", "lowercase dictionary word", "asyncio"),
        ("Navigation", "site navigation word", "Kestrel Navigation System"),
        ("Previous topic", "site navigation word", "Previous Records Ltd"),
        ("Table of Contents", "site navigation word", "Table Mountain"),
        ("Lib/asyncio/tasks.py", "file path", "TCP/IP"),
        ("17:14:32 hello", "mostly digits", "Apollo 11"),
        ("Important Save a reference", "admonition", "Noteworthy Labs"),
        ("### ---", "no letters", "Jonas Lindqvist"),
        ("n\u2019t", "contraction", "O\u2019Reilly"),
    ],
)
def test_noise_is_rejected_and_its_near_miss_kept(noise, reason, kept):
    assert rejection(noise) == reason
    assert rejection(kept) is None


def test_overlong_spans_are_rejected():
    assert rejection("word " * 9) == "too long"
    assert rejection("a" * 101) == "too long"


@pytest.mark.parametrize(
    ("name", "reason"),
    [("Python", "common word"), ("Windows", "common word"), ("Kestrel Navigation System", None)],
)
def test_near_misses_name_why_they_look_like_noise(name, reason):
    assert rejection(name) is None
    if reason is None:
        assert near_miss(name) in {None, "common words only"}
    else:
        assert near_miss(name) == reason


def test_identifiers_and_acronyms_are_no_near_misses():
    assert near_miss("os.path.join") is None
    assert near_miss("IETF") is None
    assert near_miss("TCP/IP") is None
    assert near_miss("module") is None  # rejected outright, so no near-miss
