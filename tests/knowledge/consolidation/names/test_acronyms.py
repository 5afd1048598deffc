"""Acronyms (knowledge/consolidation/names/acronyms.py): a name's initials and whether a
name is written as an acronym. Pure functions: no database."""

from __future__ import annotations

import pytest

from knowledge.consolidation.names.acronyms import acronym_of, looks_like_acronym

# --- acronyms --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "acronym"),
    [
        ("International Business Machines", "ibm"),
        ("Bank of America", "boa"),
        ("Amazon Web Services", "aws"),
        ("Hewlett-Packard", "hp"),
        ("Federal Bureau of Investigation", "fbi"),
        ("Department of Defense", "dod"),
        ("Procter & Gamble", "pg"),
        ("The Walt Disney Company", "wdc"),
        ("World Health Organization", "who"),
        ("World War II", "wwii"),
        ("Apple", None),
        ("JavaScript", None),
        ("", None),
    ],
)
def test_acronym_of(name, acronym):
    assert acronym_of(name) == acronym


@pytest.mark.parametrize(
    "name",
    ["IBM", "I.B.M.", "NASA", "3M", "AT&T", "BoA", "\uff29\uff22\uff2d", "UNESCO", "P&G", "DoD"],
)
def test_looks_like_acronym(name):
    assert looks_like_acronym(name)


@pytest.mark.parametrize(
    "name", ["Apple", "Nasa", "GmbH", "A", "", "IBM Corp", "NASDAQ100X", "-AB", "Ab"]
)
def test_does_not_look_like_acronym(name):
    assert not looks_like_acronym(name)
