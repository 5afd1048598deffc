"""A relation's type says what the evidence states: a verb that names no relation (a copula,
a word the lemmatizer made up, an adjective the tagger took for a verb, a naming verb)
types none, and `related_to` stands only where nothing better is stated. A content link
still makes a `references` relation; the page's own name does not.

The real packaged spaCy pipeline runs underneath; nothing is mocked.
"""

from __future__ import annotations

import pytest

from knowledge.extraction.offline import get_offline_extractor
from knowledge.extraction.windows import WindowContext

TYPES = ("person", "organization", "location", "product", "technology", "concept", "event", "work")


@pytest.fixture(scope="module")
def extractor():
    return get_offline_extractor()


def _triples(result):
    return {(r.source, r.type, r.target) for r in result.relations}


def test_a_copula_types_no_relation_but_a_real_verb_does(extractor):
    text = (
        "Ingrid Lindqvist is the founder of Kestrel Systems. "
        "Kestrel Systems acquired Widgetron Labs in 2019.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    types = {r.type for r in result.relations}
    assert "be" not in types
    assert ("Kestrel Systems", "acquire", "Widgetron Labs") in _triples(result)


def test_a_naming_verb_types_no_relation(extractor):
    text = "The name Harbourgres is pronounced like Harbour Gres in Norway.\n"
    result = extractor.extract(text, entity_types=TYPES)

    assert "pronounce" not in {r.type for r in result.relations}


def test_related_to_gives_way_to_a_relation_the_window_states(extractor):
    # A dotted name is part of its module, and the statement under the heading names both.
    text = (
        "# frobnik — Gadget toolkit\n\n"
        "## Gadget Registry\n\n"
        "The Gadget Registry of `frobnik` keeps every `frobnik.Gadget` in one place.\n"
    )
    result = extractor.extract(
        text, entity_types=TYPES, context=WindowContext(title="frobnik — Gadget toolkit")
    )

    pairs: dict[frozenset[str], set[str]] = {}
    for relation in result.relations:
        key = frozenset((relation.source, relation.target))
        pairs.setdefault(key, set()).add(relation.type)
    assert pairs[frozenset(("frobnik.Gadget", "frobnik"))] == {"part_of"}
    assert all(types == {"related_to"} or "related_to" not in types for types in pairs.values())


def test_a_content_link_references_its_page_but_the_page_itself_does_not(extractor):
    text = (
        "# git-frob(1)\n\nThe frob command reads the index; see git-unfrob(1) to undo it, "
        "or the git-frob(1) page for options.\n"
    )
    result = extractor.extract(
        text,
        entity_types=TYPES,
        context=WindowContext(title="git-frob(1)", links=("git-unfrob(1)", "git-frob(1)")),
    )

    references = {(r.source, r.target) for r in result.relations if r.type == "references"}
    assert references == {("git-frob", "git-unfrob")}  # manual pages named without section


def test_a_content_link_to_a_keywords_page_still_references_it(extractor):
    # A DocBook reference page whose code is written in capitalised keywords links the
    # page of one of them: a keyword in running text is no entity, its linked page is.
    text = (
        "## Synopsis\n\n```\nCREATE [ TEMPORARY ] GADGET [ IF NOT EXISTS ] gadget_name\n```\n\n"
        "## Description\n\n`CREATE GADGET` makes a gadget. Read it back with `SELECT`.\n"
    )
    linked = extractor.extract(
        text,
        entity_types=TYPES,
        context=WindowContext(title="CREATE GADGET", links=("SELECT",), technical=True),
    )
    unlinked = extractor.extract(
        text, entity_types=TYPES, context=WindowContext(title="CREATE GADGET", technical=True)
    )

    assert ("CREATE GADGET", "references", "SELECT") in _triples(linked)
    assert "SELECT" not in {e.name for e in unlinked.entities}
