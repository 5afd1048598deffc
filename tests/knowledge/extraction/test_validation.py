"""Name validation and per-window limits: garbage names go, real names of every shape stay."""

from __future__ import annotations

import pytest

from knowledge.extraction.parsing import MAX_PROBLEMS, parse_extraction_output
from knowledge.extraction.types import ExtractedEntity, ExtractedRelation, ParseResult
from knowledge.extraction.validation import REASONS, name_rejection_reason, validate_window

GOOD_NAMES = [
    "AT&T",
    "C++",
    "C#",
    "Jean-Luc Picard",
    "U.S. Department of Energy",
    "3M",
    "iPhone 15 Pro",
    "O'Reilly Media",
    "Guns N' Roses",
    "Amazon.com",
    "Ada Lovelace",
    "São Paulo",
    "東京",
    "Marie Skłodowska-Curie",
    "H&M",
    "R2-D2",
    "Dr. Martin Luther King Jr.",
    "Bank of America Merrill Lynch Global Research",  # 7 words
    "Yahoo!",
    "E=mc²",
    "#MeToo",
    "The Hague",
    "2001: A Space Odyssey",
    "x" * 120,
]


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_real_names_of_every_shape_are_accepted(name):
    assert name_rejection_reason(name) is None


def test_a_name_that_casefolds_to_a_pronoun_is_rejected_even_in_capitals():
    # "IT" (the department) is lost; a pronoun entity is far more common in model output.
    assert name_rejection_reason("IT") == "pronoun"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("\n\t", "empty"),
        ("The company that Alice founded after she left her job at Acme", "too_many_words"),
        ("one two three four five six seven eight nine", "too_many_words"),
        ("{topic}", "template_artefact"),
        ("{desccription}", "template_artefact"),
        ("Acme {entity_type}", "template_artefact"),
        ("<|>Acme", "template_artefact"),
        ("Acme<|", "template_artefact"),
        ("Acme |>", "template_artefact"),
        ("Acme (confidence score: 0.9)", "template_artefact"),
        ("Acme-brief: a company", "template_artefact"),
        ("entity_name", "template_artefact"),
        ("ENTITY_NAME", "template_artefact"),
        ("<name>", "template_artefact"),
        ("Entity Name", "template_artefact"),
        ("1. Acme Corp", "list_prefix"),
        ("2) Acme Corp", "list_prefix"),
        ("- Acme Corp", "list_prefix"),
        ("* Acme Corp", "list_prefix"),
        ("• Acme Corp", "list_prefix"),
        ("https://acme.example/about", "url"),
        ("http://acme.example", "url"),
        ("www.acme.example", "url"),
        ("ftp://files.acme.example", "url"),
        ("Acme (see https://acme.example)", "url"),
        ("press@acme.example", "url"),
        ("**Acme Corp**", "markdown"),
        ("__Acme__", "markdown"),
        ("`acme-cli`", "markdown"),
        ("# Acme Corp", "markdown"),
        ("## Background", "markdown"),
        ("[Acme](https://acme.example)", "url"),  # the URL is found first
        ("[Acme](acme)", "markdown"),
        ("Acme\nCorp", "newline"),
        ("Acme\rCorp", "newline"),
        ("Acme\tCorp", "newline"),
        ("Acme\x00Corp", "newline"),
        ("Acme\u2028Corp", "newline"),
        ("A" * 121, "too_long"),
        ("Supercalifragilistic " * 6, "too_long"),
        ("---", "no_alphanumerics"),
        ("???", "no_alphanumerics"),
        ("…", "no_alphanumerics"),
        ("it", "pronoun"),
        ("They", "pronoun"),
        ("THIS", "pronoun"),
        ("the", "pronoun"),
        ("He", "pronoun"),
        ("she", "pronoun"),
        ("We", "pronoun"),
        ("you", "pronoun"),
        ("I", "pronoun"),
    ],
)
def test_bad_names_are_rejected_with_their_reason(name, reason):
    assert name_rejection_reason(name) == reason


def test_every_reason_code_is_exercised_above():
    assert set(REASONS) == {
        "empty",
        "newline",
        "template_artefact",
        "url",
        "list_prefix",
        "markdown",
        "too_long",
        "too_many_words",
        "no_alphanumerics",
        "pronoun",
    }


def test_surrounding_whitespace_alone_does_not_reject_a_name():
    assert name_rejection_reason("  Acme Corp  ") is None


@pytest.mark.parametrize(
    "name", ["a" * 100_000, "a@" * 50_000, "[" * 50_000, "a:/" * 30_000, "**" * 50_000]
)
def test_huge_names_are_judged_without_delay(name):
    assert name_rejection_reason(name) is not None


# --- validate_window ----------------------------------------------------------------------


def entity(name: str, type_: str = "organization") -> ExtractedEntity:
    return ExtractedEntity(name=name, type=type_)


def relation(source: str, target: str, type_: str = "related_to") -> ExtractedRelation:
    return ExtractedRelation(source=source, target=target, type=type_)


def test_entities_with_rejected_names_are_dropped_and_counted_by_reason():
    parsed = ParseResult(
        entities=[
            entity("Acme Corp"),
            entity("{topic}"),
            entity("it", "thing"),
            entity("1. Globex"),
            entity("they", "person"),
            entity("Initech"),
        ],
        counts={"lines": 6, "entities": 6, "relations": 0},
    )
    out = validate_window(parsed, max_entities=10, max_relations=10)
    assert [e.name for e in out.entities] == ["Acme Corp", "Initech"]
    assert out.counts == {
        "lines": 6,
        "entities": 6,
        "relations": 0,
        "rejected": 4,
        "rejected_template_artefact": 1,
        "rejected_pronoun": 2,
        "rejected_list_prefix": 1,
    }
    assert out.problems == [
        "rejected_template_artefact: {topic}",
        "rejected_pronoun: it",
        "rejected_list_prefix: 1. Globex",
        "rejected_pronoun: they",
    ]


def test_entities_beyond_the_limit_are_dropped_after_rejections():
    parsed = ParseResult(entities=[entity("it"), *(entity(f"Company {i}") for i in range(5))])
    out = validate_window(parsed, max_entities=3, max_relations=10)
    assert [e.name for e in out.entities] == ["Company 0", "Company 1", "Company 2"]
    assert out.counts["over_entity_limit"] == 2
    assert out.counts["rejected"] == 1


def test_relations_beyond_the_limit_are_dropped():
    parsed = ParseResult(relations=[relation(f"A{i}", f"B{i}") for i in range(6)])
    out = validate_window(parsed, max_entities=10, max_relations=4)
    assert [r.source for r in out.relations] == ["A0", "A1", "A2", "A3"]
    assert out.counts["over_relation_limit"] == 2


def test_self_relations_and_relations_with_an_empty_end_are_dropped():
    parsed = ParseResult(
        relations=[
            relation("Acme", "acme"),
            relation("Acme", " ACME "),
            relation("", "Acme"),
            relation("Acme", "  "),
            relation("Acme", "Globex"),
        ]
    )
    out = validate_window(parsed, max_entities=10, max_relations=10)
    assert [(r.source, r.target) for r in out.relations] == [("Acme", "Globex")]
    assert out.counts["self_relation"] == 2
    assert out.counts["malformed"] == 2


def test_dropped_relations_do_not_use_up_the_relation_limit():
    parsed = ParseResult(relations=[relation("A", "a"), relation("A", "B"), relation("B", "C")])
    out = validate_window(parsed, max_entities=10, max_relations=2)
    assert len(out.relations) == 2
    assert "over_relation_limit" not in out.counts


def test_relations_with_endpoints_outside_the_entities_are_left_for_the_caller():
    parsed = ParseResult(
        entities=[entity("Acme"), entity("{topic}")],
        relations=[relation("Acme", "{topic}"), relation("Acme", "Globex")],
    )
    out = validate_window(parsed, max_entities=10, max_relations=10)
    assert [e.name for e in out.entities] == ["Acme"]
    assert [(r.source, r.target) for r in out.relations] == [
        ("Acme", "{topic}"),
        ("Acme", "Globex"),
    ]


def test_existing_counts_problems_and_done_are_kept_and_added_to():
    parsed = ParseResult(
        entities=[entity("www.acme.example")],
        relations=[relation("X", "x")],
        counts={"lines": 3, "malformed": 1, "entities": 1, "relations": 1},
        problems=["malformed: (entity<|>X)"],
        done=True,
    )
    out = validate_window(parsed, max_entities=10, max_relations=10)
    assert out.done is True
    assert out.counts == {
        "lines": 3,
        "malformed": 1,
        "entities": 1,
        "relations": 1,
        "rejected": 1,
        "rejected_url": 1,
        "self_relation": 1,
    }
    assert out.problems == ["malformed: (entity<|>X)", "rejected_url: www.acme.example"]


def test_the_input_result_is_not_changed():
    parsed = ParseResult(
        entities=[entity("Acme"), entity("it")],
        relations=[relation("A", "a")],
        counts={"entities": 2},
    )
    validate_window(parsed, max_entities=0, max_relations=0)
    assert [e.name for e in parsed.entities] == ["Acme", "it"]
    assert len(parsed.relations) == 1
    assert parsed.counts == {"entities": 2}
    assert parsed.problems == []


def test_problems_stay_capped_when_many_names_are_rejected():
    parsed = ParseResult(entities=[entity(f"{{slot{i}}}") for i in range(50)])
    out = validate_window(parsed, max_entities=100, max_relations=100)
    assert out.counts["rejected_template_artefact"] == 50
    assert len(out.problems) == MAX_PROBLEMS


def test_a_parsed_reply_with_leaked_template_pieces_is_cleaned_for_storage():
    reply = (
        "```\n"
        '("entity"<|>"Ada Lovelace"<|>"person"<|>"Mathematician.")\n'
        '("entity"<|>"{entity_name}"<|>"person"<|>"{description}")\n'
        '("entity"<|>"She"<|>"person"<|>"The mathematician.")\n'
        '("entity"<|>"**Analytical Engine**"<|>"product"<|>"A machine.")\n'
        '("relationship"<|>"Ada Lovelace"<|>"She"<|>"same_as"<|>"x"<|>"y"<|>5)\n'
        '("relationship"<|>"Ada Lovelace"<|>"ada lovelace"<|>"knows"<|>"x"<|>"y"<|>5)\n'
        '("relationship"<|>"Ada Lovelace"<|>"Charles Babbage"<|>"works_with"<|>"x"<|>"y"<|>8)\n'
        "```"
    )
    out = validate_window(parse_extraction_output(reply), max_entities=25, max_relations=25)
    assert [e.name for e in out.entities] == ["Ada Lovelace"]
    # "She" is dangling now; the caller decides. The self-relation is gone.
    assert [(r.source, r.target) for r in out.relations] == [
        ("Ada Lovelace", "She"),
        ("Ada Lovelace", "Charles Babbage"),
    ]
    assert out.counts["rejected"] == 3
    assert out.counts["rejected_template_artefact"] == 1
    assert out.counts["rejected_pronoun"] == 1
    assert out.counts["rejected_markdown"] == 1
    assert out.counts["self_relation"] == 1
    assert out.counts["fenced"] == 2


def test_a_relation_typed_by_a_copula_alone_becomes_related_to():
    parsed = ParseResult(
        relations=[
            relation("Kestrel", "Widgetron", "be"),
            relation("Globex", "Acme", "IS"),
            relation("Acme", "Globex", "acquired"),
            relation("Initech", "Acme", "works_with"),
        ]
    )
    out = validate_window(parsed, max_entities=10, max_relations=10)
    assert [(r.source, r.target, r.type) for r in out.relations] == [
        ("Kestrel", "Widgetron", "related_to"),
        ("Acme", "Globex", "acquired"),  # the pair's copula added nothing: dropped
        ("Initech", "Acme", "works_with"),
    ]
    assert out.counts["retyped_relations"] == 1
    assert out.counts["empty_relation_type"] == 1
