"""Name similarity (knowledge/consolidation/names/similarity.py, with the bounds and the
alignment it reads): scores and reasons, against the per-type thresholds. Pure functions: no
database."""

from __future__ import annotations

import pytest

from knowledge.consolidation.names.normalise import suffixes_for_type
from knowledge.consolidation.names.similarity import Similarity, name_similarity
from knowledge.consolidation.names.thresholds import DEFAULT_THRESHOLDS, thresholds_for

# --- similarity ------------------------------------------------------------------------------


def _score(a: str, b: str, entity_type: str) -> Similarity:
    return name_similarity(a, b, suffixes=suffixes_for_type(entity_type), entity_type=entity_type)


@pytest.mark.parametrize(
    ("a", "b", "entity_type", "reason"),
    [
        ("Apple Inc.", "Apple", "organization", "same canonical name"),
        ("IBM", "International Business Machines", "organization", "acronym"),
        ("AWS", "Amazon Web Services", "organization", "acronym"),
        ("Node.js", "NodeJS", "technology", "same letters ignoring spacing and punctuation"),
        (
            "Built-in Types",
            "builtin types",
            "concept",
            "same letters ignoring spacing and punctuation",
        ),
        (
            "A.M. Kuchling",
            "A. M. Kuchling",
            "person",
            "same letters ignoring spacing and punctuation",
        ),
        ("Microsft", "Microsoft", "organization", "typo"),
        ("Sir Isaac Newton", "Isaac Newton", "person", "same words"),
    ],
)
def test_same_entity_is_merged_automatically(a, b, entity_type, reason):
    similarity = _score(a, b, entity_type)
    assert similarity.score >= thresholds_for(entity_type).auto_merge
    assert reason in similarity.reasons


@pytest.mark.parametrize(
    ("a", "b", "entity_type"),
    [
        ("J. Smith", "John Smith", "person"),
        ("Albert Einstein", "Einstein", "person"),
        ("J. R. R. Tolkien", "Tolkien", "person"),
        ("Harvard University", "Harvard", "organization"),
        # an acronym of one camel-case word: "JS" is JavaScript, "BC" is not BaseCookie
        ("JS", "JavaScript", "technology"),
        ("BC", "BaseCookie", "technology"),
        # code names told apart only by underscores, dots or parentheses: mostly two things
        ("get_value", "getvalue", "technology"),
        ("set_trace", "settrace", "technology"),
        ("http.server", "HTTPServer", "technology"),
        ("COLOR_GREEN", "Color.GREEN", "technology"),
        ("is_alive", "isAlive", "technology"),  # one of the few that are one thing
        # one word against a phrase around it, a joining word apart ("del" as in "del Toro")
        ("Statements", "The del statement", "concept"),
        ("Operators", "in-operator", "concept"),
    ],
)
def test_plausible_pairs_go_to_review(a, b, entity_type):
    thresholds = thresholds_for(entity_type)
    assert thresholds.review <= _score(a, b, entity_type).score < thresholds.auto_merge


HARD_NEGATIVES = [
    ("Java", "JavaScript", "technology"),
    ("C++", "C#", "technology"),
    ("SQL", "NoSQL", "technology"),
    ("HTTP", "HTTPS", "technology"),
    ("GPT-3", "GPT-4", "technology"),
    ("iPhone 14", "iPhone 15", "product"),
    ("iPhone 14", "iPhone 14 Pro", "product"),
    ("Windows 10", "Windows 11", "product"),
    ("Galaxy S23", "Galaxy S24", "product"),
    ("World War I", "World War II", "event"),
    ("Super Bowl LVII", "Super Bowl LVIII", "event"),
    ("John Smith", "Jane Smith", "person"),
    ("Maria Callas", "Mario Callas", "person"),
    ("Elizabeth I", "Elizabeth II", "person"),
    ("Austria", "Australia", "location"),
    ("Niger", "Nigeria", "location"),
    ("South Korea", "Korea", "location"),
    ("York", "New York", "location"),
    ("Apple", "Applied Materials", "organization"),
    ("Ford", "Ford Foundation", "organization"),
    ("Sun Microsystems", "Sun", "organization"),
    ("Bank of America", "Bank of American Samoa", "organization"),
    ("Deutsche Bank", "Deutsche Bahn", "organization"),
    ("microeconomics", "macroeconomics", "concept"),
    ("hypertension", "hypotension", "concept"),
    ("supervised learning", "semi-supervised learning", "concept"),
    ("vitamin A", "vitamin E", "concept"),
    ("Attention Is All You Need", "Attention Is Not All You Need", "work"),
    ("Toy Story 2", "Toy Story 3", "work"),
    # a concept's extra words make another concept (Python manual)
    ("Functions", "Special functions", "concept"),
    ("Statements", "Assignment statements", "concept"),
]


@pytest.mark.parametrize(("a", "b", "entity_type"), HARD_NEGATIVES)
def test_hard_negatives_stay_below_review(a, b, entity_type):
    similarity = _score(a, b, entity_type)
    assert similarity.score < thresholds_for(entity_type).review, similarity


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("PUT", "Py_UNICODE_TOUPPER"),
        ("ACID", "asynchat.async_chat.collect_incoming_data"),
        ("RSA", "rmtree.avoids_symlink_attacks"),
        ("IPC", "IDLE_PRIORITY_CLASS"),
    ],
)
def test_the_initials_of_a_code_name_are_no_acronym_of_it(a, b):
    """Python manual: these were merged as acronyms (116 such merges, 3 right)."""
    similarity = _score(a, b, "technology")
    assert "acronym" not in similarity.reasons
    assert similarity.score < thresholds_for("technology").review


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # Python manual: merged as typos, or as an acronym of words written as code.
        ("docstring", "DOMString"),
        ("StreamReader Objects", "StreamRecoder Objects"),
        ("resent-to", "reset()"),
        ("SI", "struct _inittab"),
        ("OpenGL", "OpenCL"),
    ],
)
def test_a_word_written_as_code_is_no_typo_or_acronym_of_another(a, b):
    similarity = _score(a, b, "concept")
    assert not {"typo", "acronym of words"} & set(similarity.reasons), similarity
    assert similarity.score < thresholds_for("concept").review
    # A typo in a word written as a word still is one, camel case or not.
    for x, y in [("Bluetooth", "Blutooth"), ("DiCaprio", "DiCapiro"), ("socialism", "socialsm")]:
        assert "typo" in _score(x, y, "concept").reasons


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Exceptions and warnings", "exception Warning"),
        ("Python and C", "Python\u2019s C"),
        ("d[key]", "del d[key]"),  # in code "del" is a word
    ],
)
def test_a_name_of_two_things_or_a_longer_statement_is_a_question_not_a_merge(a, b):
    """Python manual: merged as "same words", "and" and "del" being filler words."""
    similarity = _score(a, b, "concept")
    assert similarity.score < thresholds_for("concept").auto_merge, similarity
    both = _score("Structures and unions", "Structure and Union", "concept")
    assert both.score >= thresholds_for("concept").auto_merge
    assert _score("Procter & Gamble", "Procter and Gamble", "organization").score == 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # Python manual: open review pairs, every one two things.
        ("Structure", "Data Structures"),
        ("Platform", "All Platforms"),
        ("Built-in Functions", "Changes to Built-in Functions"),
        ("context manager", "Runner context manager"),
        ("ethics", "AI ethics"),
    ],
)
def test_a_concept_with_words_in_front_is_a_narrower_concept_not_a_question(a, b):
    similarity = _score(a, b, "concept")
    assert similarity.score < thresholds_for("concept").review, similarity
    # Words in front of a person's, a product's or an event's name add nothing.
    assert _score("Albert Einstein", "Einstein", "person").score >= 0.75
    assert _score("Adobe Photoshop", "Photoshop", "product").score >= 0.75
    assert _score("2022 FIFA World Cup", "World Cup 2022", "event").score >= 0.85


@pytest.mark.parametrize(
    ("a", "b", "entity_type", "same"),
    [
        # Python manual: a web address had joined a word of the same letters.
        ("Python", "python.org", "technology", False),
        ("Command", "command.com", "technology", False),
        ("Amazon", "Amazon.com", "organization", True),  # the owner's name
        ("Salesforce", "Salesforce.com", "product", True),
        ("Node", "Node.js", "technology", True),  # ".js" is no web address
    ],
)
def test_a_web_address_is_its_owner_only_for_organisations_and_products(a, b, entity_type, same):
    similarity = _score(a, b, entity_type)
    merges = similarity.score >= thresholds_for(entity_type).auto_merge
    assert merges is same, similarity


def test_reasons_say_why_in_words():
    assert "number differs (14 vs 15)" in _score("iPhone 14", "iPhone 15", "product").reasons
    assert any(r.startswith("substring only") for r in _score("Java", "JavaScript", "x").reasons)
    similarity = _score("John Smith", "Jane Smith", "person")
    assert similarity.reasons[0].startswith("token-set ")
    assert "different words (john / jane)" in similarity.reasons


def test_similarity_is_symmetric_bounded_and_frozen(pairs):
    for p in pairs:
        one = _score(p["a"], p["b"], p["type"])
        assert one.score == _score(p["b"], p["a"], p["type"]).score
        assert 0.0 <= one.score <= 1.0
    assert name_similarity("", "Apple").score == 0.0
    with pytest.raises(AttributeError):
        one.score = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("codecs.BOM_UTF16_LE", "codecs.BOM_UTF16"),  # "le" is an article elsewhere
        ("ipaddress.IPv6Network.supernet_of", "ipaddress.IPv6Network.supernet"),
        # A word and an identifier that contains it: never even worth a review.
        ("dict", "configparser.ConfigParser.read_dict"),
        ("trace", "Py_TRACE_REFS"),
        ("LookupError", "PyExc_LookupError"),
        # nor is a part's plural its singular: two functions, two settings
        ("get_config_var", "get_config_vars"),
        ("sysconfig.get_config_var()", "sysconfig.get_config_vars()"),
        ("data_file", "data_files"),
        # nor its parts in another order
        ("received_data", "data_received"),
        ("MAX_Py_ssize_t", "PY_SSIZE_T_MAX"),
    ],
)
def test_every_part_of_an_identifier_counts(a, b):
    assert name_similarity(a, b).score < DEFAULT_THRESHOLDS.review
    assert name_similarity("Bank of America", "Bank America").score >= DEFAULT_THRESHOLDS.auto_merge
