"""The model-output parser: every record it can read survives, everything else is counted.

Replies here are the kind models really send: fenced, chatty, with the wrong delimiters,
quotes and parentheses, missing fields, stray Unicode, JSON instead of records.
"""

from __future__ import annotations

import json
import random
import re
import time

import pytest

from knowledge.extraction.parsing import (
    MAX_DESCRIPTION_CHARS,
    MAX_NAME_CHARS,
    MAX_PROBLEMS,
    PROBLEM_CHARS,
    parse_extraction_output,
)
from knowledge.extraction.types import ExtractedEntity, ExtractedRelation

CLEAN_REPLY = """\
("entity"<|>Ada Lovelace<|>person<|>Mathematician who wrote the first published algorithm.)
("entity"<|>Charles Babbage<|>person<|>Designer of the Analytical Engine.)
("entity"<|>Analytical Engine<|>product<|>A mechanical general-purpose computer.)
("relationship"<|>Analytical Engine<|>Charles Babbage<|>created_by<|>Babbage designed the Analytical Engine.<|>design, invention<|>9)
("relationship"<|>Ada Lovelace<|>Analytical Engine<|>uses<|>Lovelace wrote an algorithm for it.<|>algorithm, programming<|>7)
<|COMPLETE|>
"""


def names(result) -> list[str]:
    return [e.name for e in result.entities]


def nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v}


# --- The format as asked ------------------------------------------------------------------


def test_a_reply_in_the_asked_format_parses_completely_with_nothing_to_report():
    result = parse_extraction_output(CLEAN_REPLY)

    assert result.entities == [
        ExtractedEntity(
            "Ada Lovelace", "person", "Mathematician who wrote the first published algorithm."
        ),
        ExtractedEntity("Charles Babbage", "person", "Designer of the Analytical Engine."),
        ExtractedEntity("Analytical Engine", "product", "A mechanical general-purpose computer."),
    ]
    assert result.relations == [
        ExtractedRelation(
            source="Analytical Engine",
            target="Charles Babbage",
            type="created_by",
            description="Babbage designed the Analytical Engine.",
            keywords=("design", "invention"),
            strength=9.0,
        ),
        ExtractedRelation(
            source="Ada Lovelace",
            target="Analytical Engine",
            type="uses",
            description="Lovelace wrote an algorithm for it.",
            keywords=("algorithm", "programming"),
            strength=7.0,
        ),
    ]
    assert result.counts == {"lines": 5, "entities": 3, "relations": 2}
    assert result.problems == []
    assert result.done is False


def test_the_always_present_counts_exist_even_for_an_empty_reply():
    result = parse_extraction_output("")
    assert result.counts == {"lines": 0, "entities": 0, "relations": 0}
    assert result.entities == [] and result.relations == []


def test_records_separated_by_double_hash_on_one_line_are_all_read():
    reply = (
        '("entity"<|>"Acme Corp"<|>"organization"<|>"Maker of anvils.")##'
        '("entity"<|>"Wile E. Coyote"<|>"person"<|>"Buys anvils.")## '
        '("relationship"<|>"Wile E. Coyote"<|>"Acme Corp"<|>"customer_of"<|>"Buys from Acme."'
        '<|>"anvils"<|>8)<|COMPLETE|>'
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["Acme Corp", "Wile E. Coyote"]
    assert [(r.source, r.target, r.type) for r in result.relations] == [
        ("Wile E. Coyote", "Acme Corp", "customer_of")
    ]
    assert nonzero(result.counts) == {"lines": 1, "entities": 2, "relations": 1}


def test_a_double_hash_inside_a_description_does_not_split_the_record():
    reply = '("entity"<|>C Sharp<|>language<|>Often misspelled C## by beginners.)'
    result = parse_extraction_output(reply)
    assert result.entities[0].description == "Often misspelled C## by beginners."


def test_a_markdown_heading_made_of_hashes_is_prose():
    reply = "## Entities\n" + CLEAN_REPLY
    result = parse_extraction_output(reply)
    assert len(result.entities) == 3
    assert result.counts["prose_lines"] == 1


# --- Fences and prose ---------------------------------------------------------------------


def test_a_fenced_reply_with_prose_around_it_keeps_every_record_and_counts_the_rest():
    reply = (
        "Here are the entities:\n\n"
        "```text\n"
        '("entity"<|>"Marie Curie"<|>"person"<|>"Physicist and chemist.")\n'
        '("entity"<|>"University of Paris"<|>"organization"<|>"Where Curie taught.")\n'
        "\n"
        "And the relationships between them:\n"
        '("relationship"<|>"Marie Curie"<|>"University of Paris"<|>"works_for"<|>'
        '"Curie was a professor there."<|>"professor, teaching"<|>9)\n'
        "```\n"
        "Let me know if you need anything else!"
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["Marie Curie", "University of Paris"]
    assert result.relations[0].type == "works_for"
    assert nonzero(result.counts) == {
        "lines": 8,
        "fenced": 2,
        "prose_lines": 3,
        "entities": 2,
        "relations": 1,
    }
    assert result.problems == []  # prose is expected chatter, not a problem


@pytest.mark.parametrize("opening", ["```", "```json", "```text", "~~~", "```python"])
def test_any_code_fence_line_is_dropped(opening):
    reply = f"{opening}\n" + '("entity"<|>Kyoto<|>location<|>A city in Japan.)\n```'
    result = parse_extraction_output(reply)
    assert names(result) == ["Kyoto"]
    assert result.counts["fenced"] == 2
    assert "prose_lines" not in result.counts


def test_fences_glued_to_a_record_are_stripped():
    result = parse_extraction_output('```("entity"<|>Kyoto<|>location<|>A city.)```')
    assert names(result) == ["Kyoto"]
    assert result.counts["fenced"] == 2


# --- Delimiters, quotes, parentheses, record types -------------------------------------


@pytest.mark.parametrize(
    "delimiter",
    ["|", " | ", "<||>", " <|> ", "<|> ", "< | >", "\t", "\uff5c", " \uff5c ", "<\uff5c>"],
)
def test_wrong_delimiters_are_tolerated_and_counted(delimiter):
    d = delimiter
    reply = (
        f'("entity"{d}"Tim Berners-Lee"{d}"person"{d}"Inventor of the Web.")\n'
        f'("entity"{d}"CERN"{d}"organization"{d}"European research lab.")\n'
        f'("relationship"{d}"Tim Berners-Lee"{d}"CERN"{d}"works_for"{d}"He worked at CERN."'
        f'{d}"research, web"{d}"8")'
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["Tim Berners-Lee", "CERN"]
    assert result.entities[0].description == "Inventor of the Web."
    assert result.relations == [
        ExtractedRelation(
            source="Tim Berners-Lee",
            target="CERN",
            type="works_for",
            description="He worked at CERN.",
            keywords=("research", "web"),
            strength=8.0,
        )
    ]
    assert result.counts["wrong_delimiter"] == 3


def test_a_reply_using_spaced_pipes_throughout_is_read_like_the_real_format():
    reply = (
        "entity | OpenAI | organization | AI research company.\n"
        "entity | Sam Altman | person | CEO of OpenAI.\n"
        "relationship | Sam Altman | OpenAI | leads | Altman is the CEO. | ceo, leadership | 9\n"
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["OpenAI", "Sam Altman"]
    assert result.relations[0].type == "leads"
    assert result.relations[0].strength == 9.0
    assert nonzero(result.counts) == {
        "lines": 3,
        "wrong_delimiter": 3,
        "missing_parens": 3,
        "entities": 2,
        "relations": 1,
    }


def test_a_table_header_row_is_prose_not_an_entity():
    reply = (
        "Entity | Name | Type | Description |\n"
        "entity | Kenya | location | A country in East Africa.\n"
        "relationship | Source | Target | Type | Description | Keywords | Strength\n"
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["Kenya"]
    assert result.relations == []
    assert result.counts["prose_lines"] == 2


def test_pipes_inside_a_description_do_not_split_it_when_the_real_delimiter_is_used():
    result = parse_extraction_output('("entity"<|>Bash<|>software<|>Pipes a | b into c.)')
    assert result.entities[0].description == "Pipes a | b into c."
    assert "wrong_delimiter" not in result.counts


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ('"', '"'),
        ("'", "'"),
        ("\u201c", "\u201d"),  # curly double quotes
        ("\u2018", "\u2019"),  # curly single quotes
        ("`", "`"),
        ("", ""),
        ('"', ""),  # unbalanced
    ],
)
def test_quotes_of_any_kind_around_fields_are_removed(left, right):
    def q(value: str) -> str:
        return f"{left}{value}{right}"

    reply = (
        f"({q('entity')}<|>{q('Grace Hopper')}<|>{q('person')}<|>{q('Computer scientist.')})\n"
        f"({q('relationship')}<|>{q('Grace Hopper')}<|>{q('COBOL')}<|>{q('created')}"
        f"<|>{q('She designed it.')}<|>{q('language, compiler')}<|>{q('9')})"
    )
    result = parse_extraction_output(reply)
    assert result.entities == [ExtractedEntity("Grace Hopper", "person", "Computer scientist.")]
    relation = result.relations[0]
    assert (relation.source, relation.target, relation.type) == ("Grace Hopper", "COBOL", "created")
    assert relation.description == "She designed it."
    assert relation.keywords == ("language", "compiler")
    assert relation.strength == 9.0


def test_apostrophes_that_belong_to_a_name_are_kept():
    reply = (
        '("entity"<|>Guns N\' Roses<|>organization<|>A rock band.)\n'
        '("entity"<|>\'Ndrangheta<|>organization<|>A criminal organisation.)\n'
        '("entity"<|>O\'Reilly Media<|>organization<|>A publisher.)'
    )
    assert names(parse_extraction_output(reply)) == [
        "Guns N' Roses",
        "'Ndrangheta",
        "O'Reilly Media",
    ]


@pytest.mark.parametrize(
    "record",
    [
        '"entity"<|>Nairobi<|>location<|>Capital of Kenya.)',
        '("entity"<|>Nairobi<|>location<|>Capital of Kenya.',
        '"entity"<|>Nairobi<|>location<|>Capital of Kenya.',
        "entity<|>Nairobi<|>location<|>Capital of Kenya.",
    ],
)
def test_missing_parentheses_on_either_side_are_tolerated_and_counted(record):
    result = parse_extraction_output(record)
    assert result.entities == [ExtractedEntity("Nairobi", "location", "Capital of Kenya.")]
    assert result.counts["missing_parens"] == 1


def test_parentheses_inside_a_description_survive():
    result = parse_extraction_output(
        '("entity"<|>Alan Turing<|>person<|>Mathematician (born 1912))\n'
        '("entity"<|>Bletchley Park<|>location<|>Codebreaking site (WWII)'
    )
    assert [e.description for e in result.entities] == [
        "Mathematician (born 1912)",
        "Codebreaking site (WWII)",
    ]
    assert result.counts["missing_parens"] == 1


@pytest.mark.parametrize(
    "keyword",
    ["entity", "Entity", '"ENTITY"', "'entity'", "entities", "node", "\u201centity\u201d"],
)
def test_entity_record_types_in_any_spelling_are_entities(keyword):
    result = parse_extraction_output(f"({keyword}<|>Lagos<|>location<|>A city in Nigeria.)")
    assert names(result) == ["Lagos"]


@pytest.mark.parametrize(
    "keyword",
    ["relationship", "Relationship", '"RELATIONSHIP"', "relation", "relations", "edge", "rel"],
)
def test_relationship_record_types_in_any_spelling_are_relations(keyword):
    result = parse_extraction_output(
        f"({keyword}<|>Lagos<|>Nigeria<|>located_in<|>Lagos is in Nigeria.<|>geography<|>10)"
    )
    assert [(r.source, r.target, r.type) for r in result.relations] == [
        ("Lagos", "Nigeria", "located_in")
    ]


def test_numbered_and_bulleted_records_are_read_and_counted():
    reply = (
        '1. ("entity"<|>Rust<|>language<|>A systems language.)\n'
        '2) ("entity"<|>Mozilla<|>organization<|>Sponsored Rust.)\n'
        '- ("relationship"<|>Mozilla<|>Rust<|>sponsors<|>Mozilla backed Rust.<|>funding<|>6)\n'
        '* "entity"<|>Cargo<|>software<|>Rust\'s package manager.\n'
        "\u2022 (entity<|>Ferris<|>mascot<|>The crab.)"
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["Rust", "Mozilla", "Cargo", "Ferris"]
    assert len(result.relations) == 1
    assert result.counts["list_prefix"] == 5


def test_python_tuple_style_records_with_commas_are_read():
    reply = (
        '("entity", "Linus Torvalds", "person", "Creator of Linux, and of Git.")\n'
        '("relationship", "Linus Torvalds", "Linux", "created", "He wrote it.", "kernel", 10)'
    )
    result = parse_extraction_output(reply)
    assert result.entities == [
        ExtractedEntity("Linus Torvalds", "person", "Creator of Linux, and of Git.")
    ]
    assert result.relations[0].strength == 10.0
    assert result.counts["wrong_delimiter"] == 2


def test_parenthesised_records_of_an_unknown_type_are_counted_not_read():
    reply = CLEAN_REPLY + '("content_keywords"<|>"computing, history")\n'
    result = parse_extraction_output(reply)
    assert len(result.entities) == 3
    assert result.counts["unknown_record"] == 1
    assert result.problems == ['unknown_record: ("content_keywords"<|>"computing, history")']


# --- Missing and extra fields ---------------------------------------------------------------


def test_an_entity_without_description_is_kept_with_an_empty_one():
    result = parse_extraction_output('("entity"<|>Oslo<|>location)')
    assert result.entities == [ExtractedEntity("Oslo", "location", "")]
    assert "missing_fields" not in result.counts


def test_an_entity_with_an_empty_type_is_skipped_and_counted():
    result = parse_extraction_output('("entity"<|>Oslo<|><|>Capital of Norway.)')
    assert result.entities == []
    assert result.counts["missing_fields"] == 1
    assert result.problems == ['missing_fields: ("entity"<|>Oslo<|><|>Capital of Norway.)']


def test_an_entity_with_an_empty_name_is_skipped_and_counted():
    result = parse_extraction_output('("entity"<|>""<|>location<|>Somewhere.)')
    assert result.entities == []
    assert result.counts["missing_fields"] == 1


def test_a_relationship_without_type_gets_related_to():
    result = parse_extraction_output('("relationship"<|>Oslo<|>Norway)')
    assert result.relations == [ExtractedRelation("Oslo", "Norway", "related_to")]
    assert result.counts["defaulted_type"] == 1
    assert result.counts["bad_strength"] == 1  # no strength either: 5.0


def test_a_relationship_with_an_empty_endpoint_is_skipped_and_counted():
    result = parse_extraction_output('("relationship"<|>Oslo<|> <|>capital_of<|>x<|>y<|>9)')
    assert result.relations == []
    assert result.counts["missing_fields"] == 1


@pytest.mark.parametrize(
    "record",
    ['("entity"<|>Oslo)', '("relationship"<|>Oslo)', "(entity|Oslo)", '("entity"<|>)'],
)
def test_records_with_fewer_than_three_fields_are_malformed(record):
    result = parse_extraction_output(record)
    assert result.entities == [] and result.relations == []
    assert result.counts["malformed"] == 1
    assert result.problems == [f"malformed: {record}"]


def test_lightrags_own_relationship_shape_without_a_type_is_read():
    reply = (
        '("relationship"<|>"Alex"<|>"Taylor"<|>"Alex is frustrated by Taylor\'s certainty."'
        '<|>"power dynamics, conflict"<|>7)'
    )
    result = parse_extraction_output(reply)
    assert result.relations == [
        ExtractedRelation(
            source="Alex",
            target="Taylor",
            type="related_to",
            description="Alex is frustrated by Taylor's certainty.",
            keywords=("power dynamics", "conflict"),
            strength=7.0,
        )
    ]
    assert result.counts["defaulted_type"] == 1


def test_a_relationship_without_keywords_but_with_strength_is_read():
    result = parse_extraction_output(
        '("relationship"<|>Alex<|>Taylor<|>works_with<|>They share a lab.<|>8)'
    )
    relation = result.relations[0]
    assert (relation.type, relation.description, relation.keywords, relation.strength) == (
        "works_with",
        "They share a lab.",
        (),
        8.0,
    )


def test_a_relationship_with_keywords_that_contain_numbers_is_not_mistaken_for_strength():
    result = parse_extraction_output(
        '("relationship"<|>IBM<|>Red Hat<|>acquired<|>IBM bought Red Hat.<|>2019, acquisition)'
    )
    relation = result.relations[0]
    assert relation.keywords == ("2019", "acquisition")
    assert relation.strength == 5.0
    assert result.counts["bad_strength"] == 1


def test_extra_entity_fields_are_kept_in_the_description():
    result = parse_extraction_output("(entity|Unix|software|An OS | from Bell Labs)")
    assert result.entities[0].description == "An OS from Bell Labs"
    assert result.counts["extra_fields"] == 1


def test_keywords_are_trimmed_unquoted_and_deduplicated():
    result = parse_extraction_output(
        '("relationship"<|>A Co<|>B Co<|>owns<|>A owns B.<|> "merger" , Merger,, stake ;x<|>6)'
    )
    assert result.relations[0].keywords == ("merger", "stake", "x")


# --- Strength -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "strength", "count"),
    [
        ("7", 7.0, None),
        ("7.5", 7.5, None),
        ('"9"', 9.0, None),
        ("8/10", 8.0, None),
        ("strength: 6", 6.0, None),
        ("12", 10.0, "strength_clamped"),
        ("0", 1.0, "strength_clamped"),
        ("-3", 1.0, "strength_clamped"),
        ("99999999999999999999999", 10.0, "strength_clamped"),
        ("high", 5.0, "bad_strength"),
        ("", 5.0, "bad_strength"),
    ],
)
def test_strength_is_read_clamped_to_one_to_ten_or_defaulted(written, strength, count):
    result = parse_extraction_output(
        f'("relationship"<|>Apple<|>Beats<|>acquired<|>Apple bought Beats.<|>deal<|>{written})'
    )
    assert result.relations[0].strength == strength
    if count:
        assert result.counts[count] == 1
    other_counts = {"strength_clamped", "bad_strength"} - {count}
    assert not other_counts & set(result.counts)


# --- Types ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "normalised"),
    [
        ("Organization", "organization"),
        ("PERSON", "person"),
        ("works for", "works_for"),
        ("Works-For", "works_for"),
        ("WorksFor", "works_for"),
        ("  located_in ", "located_in"),
        ('"part of"', "part_of"),
    ],
)
def test_types_are_normalised_to_lowercase_snake_case(written, normalised):
    reply = (
        f'("entity"<|>Acme<|>{written}<|>x)\n'
        f'("relationship"<|>Acme<|>Globex<|>{written}<|>x<|>y<|>5)'
    )
    result = parse_extraction_output(reply)
    assert result.entities[0].type == normalised
    assert result.relations[0].type == normalised
    assert not result.entities[0].proposed_type


@pytest.mark.parametrize(
    "written", ["NEW:gene", "new: Gene", "NEW: gene", "New : GENE", '"NEW:gene"']
)
def test_new_prefixed_types_are_proposed_types(written):
    reply = (
        f'("entity"<|>BRCA1<|>{written}<|>A human tumour suppressor gene.)\n'
        f'("relationship"<|>BRCA1<|>Breast cancer<|>{written}<|>x<|>y<|>5)'
    )
    result = parse_extraction_output(reply)
    assert result.entities == [
        ExtractedEntity("BRCA1", "gene", "A human tumour suppressor gene.", proposed_type=True)
    ]
    assert result.relations[0].type == "gene"
    assert result.relations[0].proposed_type is True
    assert result.counts["proposed_types"] == 2


def test_a_type_that_merely_starts_with_new_is_not_a_proposal():
    result = parse_extraction_output('("entity"<|>BBC<|>News outlet<|>x)')
    assert result.entities[0].type == "news_outlet"
    assert result.entities[0].proposed_type is False


def test_a_bare_new_prefix_is_a_missing_type():
    result = parse_extraction_output('("entity"<|>BBC<|>NEW:<|>x)')
    assert result.entities == []
    assert result.counts["missing_fields"] == 1


# --- Names and descriptions -----------------------------------------------------------------


def test_stray_unicode_is_removed_and_spaces_normalised():
    reply = (
        "\ufeff("
        '"entity"<|>"\u200bNew\u00a0York\u200c City\u200d "<|>'
        '"location"<|>"  The   largest\u202fcity\x07 in the US. ")\r\n'
        '("entity"<|>"S\u00e3o\u2060 Paulo"<|>"location"<|>"Brazil\'s biggest city.")'
    )
    result = parse_extraction_output(reply)
    assert result.entities == [
        ExtractedEntity("New York City", "location", "The largest city in the US."),
        ExtractedEntity("S\u00e3o Paulo", "location", "Brazil's biggest city."),
    ]
    # BOM, three zero-width, NBSP, narrow NBSP, BEL, word joiner.
    assert result.counts["stray_chars"] == 8


def test_names_are_nfkc_normalised_but_keep_their_case():
    result = parse_extraction_output(
        '("entity"<|>\uff21\uff23\uff2d\uff25 Widgets<|>organization<|>x)'
    )
    assert names(result) == ["ACME Widgets"]


def test_internal_whitespace_in_names_and_descriptions_is_collapsed():
    result = parse_extraction_output(
        '("entity"<|>  Ada \t  Lovelace <|>person<|>  A   pioneer \t of computing.  )'
    )
    assert result.entities == [ExtractedEntity("Ada Lovelace", "person", "A pioneer of computing.")]


def test_overlong_names_and_descriptions_are_cut_and_counted():
    name = "Very Long Name " * 40
    reply = f'("entity"<|>{name}<|>organization<|>{"word " * 1000})'
    result = parse_extraction_output(reply)
    entity = result.entities[0]
    assert len(entity.name) <= MAX_NAME_CHARS and entity.name.startswith("Very Long Name")
    assert len(entity.description) <= MAX_DESCRIPTION_CHARS
    assert result.counts["long_name"] == 1
    assert result.counts["long_description"] == 1


def test_duplicate_entities_are_merged_keeping_the_first_and_its_descriptions():
    reply = (
        '("entity"<|>Python<|>language<|>A programming language.)\n'
        '("entity"<|>python<|>Language<|>Created by Guido van Rossum.)\n'
        '("entity"<|>PYTHON<|>language<|>A programming language.)\n'
        '("entity"<|>Python<|>language)\n'
        '("entity"<|>Python<|>animal<|>A snake.)'
    )
    result = parse_extraction_output(reply)
    assert result.entities == [
        ExtractedEntity(
            "Python", "language", "A programming language. Created by Guido van Rossum."
        ),
        ExtractedEntity("Python", "animal", "A snake."),
    ]
    assert result.counts["duplicates"] == 3
    assert result.counts["entities"] == 2


# --- A realistic mixed reply ----------------------------------------------------------------


def test_a_reply_mixing_good_and_broken_lines_keeps_the_good_ones_and_counts_each_fault():
    reply = (
        "Sure! Here is the extraction.\n"
        '("entity"<|>"Nvidia"<|>"organization"<|>"Chip designer.")\n'
        '("entity"<|>"Jensen Huang"<|>"person")\n'  # no description: fine
        '("entity"<|>"TSMC")\n'  # malformed
        '("entity"<|>"Santa Clara"<|>""<|>"HQ city.")\n'  # no type: skipped
        '("relationship"<|>"Jensen Huang"<|>"Nvidia"<|>"leads"<|>"CEO."<|>"ceo"<|>"very")\n'
        '("relationship"<|>"Nvidia"<|>"TSMC"<|>"NEW:manufactured_by"<|>"TSMC fabs chips."'
        "<|>fabs<|>11)\n"
        '("relationship"<|>""<|>"Nvidia"<|>"owns"<|>"?"<|>x<|>3)\n'  # no source: skipped
        "I hope this helps."
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["Nvidia", "Jensen Huang"]
    assert [(r.source, r.target, r.type, r.strength) for r in result.relations] == [
        ("Jensen Huang", "Nvidia", "leads", 5.0),
        ("Nvidia", "TSMC", "manufactured_by", 10.0),
    ]
    assert result.counts == {
        "lines": 9,
        "prose_lines": 2,
        "malformed": 1,
        "missing_fields": 2,
        "bad_strength": 1,
        "proposed_types": 1,
        "strength_clamped": 1,
        "entities": 2,
        "relations": 2,
    }
    assert result.problems == [
        'malformed: ("entity"<|>"TSMC")',
        'missing_fields: ("entity"<|>"Santa Clara"<|>""<|>"HQ city.")',
        'missing_fields: ("relationship"<|>""<|>"Nvidia"<|>"owns"<|>"?"<|>x<|>3)',
    ]
    assert result.done is False


def test_problems_are_capped_in_number_and_length():
    reply = "\n".join(f'("entity"<|>{"x" * 500}{i})' for i in range(50))
    result = parse_extraction_output(reply)
    assert result.counts["malformed"] == 50
    assert len(result.problems) == MAX_PROBLEMS
    assert all(len(p) <= PROBLEM_CHARS for p in result.problems)


def test_parsing_stops_at_max_items_and_says_so():
    reply = "\n".join(f'("entity"<|>Company {i}<|>organization<|>x)' for i in range(10))
    reply += '\n("relationship"<|>Company 0<|>Company 1<|>owns<|>x<|>y<|>5)'
    result = parse_extraction_output(reply, max_items=4)
    assert names(result) == ["Company 0", "Company 1", "Company 2", "Company 3"]
    assert result.relations == []
    assert result.counts["truncated"] == 1


def test_duplicates_do_not_use_up_max_items():
    reply = "\n".join('("entity"<|>Acme<|>organization<|>x)' for _ in range(5))
    reply += '\n("entity"<|>Globex<|>organization<|>y)'
    result = parse_extraction_output(reply, max_items=2)
    assert names(result) == ["Acme", "Globex"]
    assert "truncated" not in result.counts


# --- JSON fallback ------------------------------------------------------------------------


def test_a_json_object_inside_prose_and_a_fence_is_read():
    payload = {
        "entities": [
            {"name": "SpaceX", "type": "Organization", "description": "Rocket maker."},
            {"name": "Elon Musk", "type": "person"},
            {"name": "Starship", "type": "NEW: Spacecraft", "description": "A rocket."},
        ],
        "relationships": [
            {
                "source": "Elon Musk",
                "target": "SpaceX",
                "type": "founded",
                "description": "Musk founded SpaceX in 2002.",
                "keywords": ["founder", "2002"],
                "strength": 10,
            },
            {
                "source": "SpaceX",
                "target": "Starship",
                "relation": "builds",
                "keywords": "rockets, launch",
                "weight": "8",
            },
        ],
    }
    reply = (
        "I could not use the tuple format, so here is JSON instead:\n"
        f"```json\n{json.dumps(payload, indent=2)}\n```\n"
        "Note: strengths are out of 10."
    )
    result = parse_extraction_output(reply)
    assert result.entities == [
        ExtractedEntity("SpaceX", "organization", "Rocket maker."),
        ExtractedEntity("Elon Musk", "person", ""),
        ExtractedEntity("Starship", "spacecraft", "A rocket.", proposed_type=True),
    ]
    assert result.relations == [
        ExtractedRelation(
            "Elon Musk",
            "SpaceX",
            "founded",
            "Musk founded SpaceX in 2002.",
            ("founder", "2002"),
            10.0,
        ),
        ExtractedRelation("SpaceX", "Starship", "builds", "", ("rockets", "launch"), 8.0),
    ]
    assert result.counts["json_fallback"] == 1
    assert result.counts["fenced"] == 2
    assert result.counts["prose_lines"] == 2
    assert result.done is False


def test_a_top_level_json_list_with_record_kinds_is_read():
    reply = json.dumps(
        [
            {"kind": "entity", "name": "Berlin", "type": "location"},
            {"record": "Entity", "entity_name": "Germany", "entity_type": "country"},
            {
                "kind": "relationship",
                "src_id": "Berlin",
                "tgt_id": "Germany",
                "relation": "capital of",
            },
            {"kind": "relation", "source": "Berlin", "target": "Spree", "strength": 99},
            "not a record",
        ]
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["Berlin", "Germany"]
    assert [(r.source, r.target, r.type, r.strength) for r in result.relations] == [
        ("Berlin", "Germany", "capital_of", 5.0),
        ("Berlin", "Spree", "related_to", 10.0),
    ]
    assert result.counts["json_fallback"] == 1
    assert result.counts["malformed"] == 1
    assert result.counts["defaulted_type"] == 1
    assert result.counts["bad_strength"] == 1
    assert result.counts["strength_clamped"] == 1


def test_json_records_without_a_kind_are_told_apart_by_their_fields():
    reply = (
        'Result: [{"name": "Paris", "type": "city"}, '
        '{"source": "Paris", "target": "France", "type": "located_in"}] -- end'
    )
    result = parse_extraction_output(reply)
    assert names(result) == ["Paris"]
    assert result.relations[0].type == "located_in"


def test_brackets_in_prose_before_the_json_do_not_hide_it():
    reply = 'Output [v2] follows {see below}:\n{"entities": [{"name": "Oslo", "type": "city"}]}'
    assert names(parse_extraction_output(reply)) == ["Oslo"]


def test_broken_json_is_counted_as_invalid_and_yields_nothing():
    reply = '```json\n{"entities": [{"name": "Oslo", "type": "city"},\n```'
    result = parse_extraction_output(reply)
    assert result.entities == []
    assert result.counts["json_invalid"] == 1
    assert "json_fallback" not in result.counts
    assert result.done is False


def test_json_is_not_tried_when_record_lines_are_present():
    reply = CLEAN_REPLY + '{"entities": [{"name": "Extra", "type": "thing"}]}'
    result = parse_extraction_output(reply)
    assert "Extra" not in names(result)
    assert "json_fallback" not in result.counts


def test_json_records_respect_max_items():
    reply = json.dumps({"entities": [{"name": f"E{i}", "type": "thing"} for i in range(10)]})
    result = parse_extraction_output(reply, max_items=3)
    assert names(result) == ["E0", "E1", "E2"]
    assert result.counts["truncated"] == 1


# --- Done detection ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "<|DONE|>",
        "  <|done|>  ",
        "Nothing was missed.\n<|DONE|>",
        "```\n<|DONE|>\n```",
        "I checked the text again and every entity is already listed. <|DONE|>",
        "No",
        "no.",
        "None",
        "Nothing.",
        "Nothing missed.",
        "Nothing else.",
        "No additional entities.",
        "No additional entities or relationships found.",
        "No more relationships.",
        "There are no more entities.",
        "No, nothing was missed.",
        "None found",
        "N/A",
        "DONE",
    ],
)
def test_a_reply_saying_nothing_is_left_is_done(reply):
    result = parse_extraction_output(reply)
    assert result.done is True
    assert result.entities == [] and result.relations == []


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "Yes",
        "Here are more entities:",
        "I found a few more, but I am not sure about them.",
        "No problem! Let me look again at the text and list the rest of the entities.",
        "Nothing in this text looks like an entity to me, although the author mentions several "
        "unnamed organisations and a few places without naming them precisely.",
    ],
)
def test_other_replies_without_records_are_not_done(reply):
    assert parse_extraction_output(reply).done is False


def test_a_reply_with_records_and_the_done_marker_is_not_done():
    reply = '("entity"<|>Zanzibar<|>location<|>An archipelago.)\n<|DONE|>'
    result = parse_extraction_output(reply)
    assert names(result) == ["Zanzibar"]
    assert result.done is False


def test_a_reply_with_only_broken_records_and_the_done_marker_is_not_done():
    result = parse_extraction_output('("entity"<|>Zanzibar)\n<|DONE|>')
    assert result.done is False
    assert result.counts["malformed"] == 1


def test_a_no_followed_by_records_is_not_done():
    reply = 'No, I missed one:\n("entity"<|>Pemba<|>location<|>An island.)'
    result = parse_extraction_output(reply)
    assert names(result) == ["Pemba"]
    assert result.done is False


# --- Never raises ---------------------------------------------------------------------------

_FRAGMENTS = [
    "(",
    ")",
    '"',
    "'",
    "<|>",
    "<|",
    "|>",
    "|",
    "\uff5c",
    "##",
    "\n",
    "\r",
    "\t",
    " ",
    "entity",
    "relationship",
    "NEW:",
    "<|COMPLETE|>",
    "<|DONE|>",
    "```",
    "```json",
    "{",
    "}",
    "[",
    "]",
    '{"entities": [',
    '{"name": "x", "type": "y"}',
    ",",
    ":",
    "10",
    "-1e999",
    "1" * 400,
    "\u200b",
    "\ufeff",
    "\x00",
    "\ud800",
    "\U000e0041",
    "\u2028",
    "\u00a0",
    "\u0301",
    "\ufdfa",
    "no",
]
_TYPE_PATTERN = re.compile(r"\w+")


def _random_text(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 40)):
        roll = rng.random()
        if roll < 0.5:
            parts.append(rng.choice(_FRAGMENTS))
        elif roll < 0.8:
            parts.append("".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(1, 12))))
        else:
            parts.append("".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(rng.randint(1, 6))))
    return "".join(parts)


def test_random_strings_never_raise_and_always_give_a_consistent_result():
    rng = random.Random(20240601)
    for _ in range(3000):
        text = _random_text(rng)
        result = parse_extraction_output(text, max_items=rng.choice([0, 1, 5, 500]))
        assert "internal_error" not in result.counts, (text, result.problems)
        assert result.counts["entities"] == len(result.entities)
        assert result.counts["relations"] == len(result.relations)
        assert len(result.problems) <= MAX_PROBLEMS
        assert all(len(p) <= PROBLEM_CHARS for p in result.problems)
        for entity in result.entities:
            assert entity.name and entity.name == entity.name.strip()
            assert len(entity.name) <= MAX_NAME_CHARS
            assert len(entity.description) <= MAX_DESCRIPTION_CHARS
            assert _TYPE_PATTERN.fullmatch(entity.type) and entity.type == entity.type.lower()
            assert "\x00" not in entity.name + entity.description
        for relation in result.relations:
            assert relation.source and relation.target
            assert 1.0 <= relation.strength <= 10.0
            assert _TYPE_PATTERN.fullmatch(relation.type)


def test_random_mutations_of_a_real_reply_never_raise():
    rng = random.Random(7)
    for _ in range(1500):
        chars = list(CLEAN_REPLY)
        for _ in range(rng.randint(1, 20)):
            position = rng.randrange(len(chars))
            action = rng.random()
            if action < 0.4:
                del chars[position]
            elif action < 0.8:
                chars.insert(position, rng.choice(_FRAGMENTS))
            else:
                chars[position] = chr(rng.randint(0, 0x10FFFF))
        result = parse_extraction_output("".join(chars))
        assert "internal_error" not in result.counts
        assert result.counts["entities"] == len(result.entities)


@pytest.mark.parametrize(
    "text",
    [
        "a##" * 100_000,
        "<" + " " * 200_000,
        "(" * 100_000,
        "[" * 100_000,
        "{" * 50_000 + "}" * 50_000,
        '"' * 100_000,
        "|" * 100_000,
        "1" * 100_000,
        "```" * 50_000,
        "\n".join('("entity"<|>A<|>b<|>c)' for _ in range(20_000)),
    ],
)
def test_pathological_inputs_finish_quickly(text):
    started = time.monotonic()
    result = parse_extraction_output(text)
    assert time.monotonic() - started < 5
    assert "internal_error" not in result.counts
