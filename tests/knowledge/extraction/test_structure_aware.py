"""The offline extractor reads what documents say about their own structure.

Each structural source on a small fixture shaped like real documentation output (the
parsers' Markdown-flavoured text): titles and headings, glossary and API entries, code
names with their dotted parents, links between pages, tables with a header row. The real
packaged spaCy pipeline runs underneath; nothing is mocked.
"""

from __future__ import annotations

import pytest

from knowledge.extraction.entity_types import looks_technical
from knowledge.extraction.offline import get_offline_extractor
from knowledge.extraction.windows import NO_CONTEXT, WindowContext, window_hash

TYPES = ("person", "organization", "location", "product", "technology", "concept", "event", "work")


@pytest.fixture(scope="module")
def extractor():
    return get_offline_extractor()


def _types(result):
    return {e.name: e.type for e in result.entities}


def _triples(result):
    return {(r.source, r.type, r.target) for r in result.relations}


def test_title_is_the_subject_and_headings_are_parts_of_it(extractor):
    text = (
        "# asyncio — Asynchronous I/O\n\n"
        "asyncio is a library to write concurrent code.\n\n"
        "## Task Groups\n\nTask groups combine a task creation API with a way to wait.\n\n"
        "## Running an asyncio Program\n\nThe program runs until it completes.\n"
    )
    result = extractor.extract(
        text, entity_types=TYPES, context=WindowContext(title="asyncio — Asynchronous I/O")
    )

    types = _types(result)
    assert types["asyncio"] == "technology"
    assert types["Task Groups"] == "concept"
    assert "Running an asyncio Program" not in types  # an action, not a topic
    assert ("Task Groups", "part_of", "asyncio") in _triples(result)
    subject = next(e for e in result.entities if e.name == "asyncio")
    assert subject.description == "Asynchronous I/O"
    assert subject.spans and text[slice(*subject.spans[0])] == "asyncio"


@pytest.mark.parametrize(
    ("page", "heading"),
    [
        # An mdBook chapter, a DocBook book, a Sphinx tutorial: clauses and contrasts.
        ("# Ownership\n\n", "## Who Rust Is For"),
        ("# Chapter 12. Advanced Administration\n\n", "## What It Does"),
        ("# Generics\n\n", "## Traits vs. Generics"),
    ],
)
def test_a_heading_that_is_a_clause_or_a_contrast_names_no_entity(extractor, page, heading):
    text = f"{page}Some words about it.\n\n{heading}\n\nMore words follow here.\n"
    result = extractor.extract(text, entity_types=TYPES, context=WindowContext(title="A page"))

    assert heading.lstrip("# ") not in _types(result)


def test_a_numbered_chapter_heading_names_its_topic_without_the_number(extractor):
    text = "# Chapter 12. Advanced Administration\n\nThis chapter covers RAID.\n"
    result = extractor.extract(text, entity_types=TYPES, context=WindowContext(title="A page"))

    assert "Advanced Administration" in _types(result)  # the near miss: one topic, named


def test_glossary_term_is_defined_by_its_definition(extractor):
    text = (
        "# Glossary\n\n"
        "awaitable\n: An object that can be used in an await expression.\n\n"
        "Global Interpreter Lock\n: The mechanism used by the interpreter to assure that "
        "only one thread executes bytecode at a time.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    entities = {e.name: e for e in result.entities}
    assert entities["awaitable"].type == "concept"
    assert entities["awaitable"].description == (
        "An object that can be used in an await expression."
    )
    assert entities["Global Interpreter Lock"].description.startswith("The mechanism used")


def test_api_entry_names_the_function_with_its_dotted_parents(extractor):
    text = (
        "`asyncio.gather(*aws, return_exceptions=False)`\n"
        ": Run awaitable objects in the aws sequence concurrently; see `asyncio.wait()`.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    entities = {e.name: e for e in result.entities}
    assert entities["asyncio.gather"].type == "technology"
    assert entities["asyncio.gather"].description.startswith("Run awaitable objects")
    triples = _triples(result)
    assert ("asyncio.gather", "part_of", "asyncio") in triples
    assert ("asyncio.wait", "part_of", "asyncio") in triples
    assert any(
        {r.source, r.target} == {"asyncio.gather", "asyncio.wait"} and r.type == "related_to"
        for r in result.relations
    )


def test_an_api_entry_defines_its_name_though_a_sentence_named_it_first(extractor):
    """graphlib's page: the overview names `get_ready()` before its entry defines it. The
    entry's definition is the name's description, marked as a definition; a name the
    definition only uses (`Sorter.done`) is not defined by it."""
    text = (
        "Call `Sorter.get_ready()` in a loop; if a cycle is found it still returns nodes.\n\n"
        "`Sorter.get_ready()`\n"
        ": Returns a tuple with all the nodes that are ready; see `Sorter.done()`.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    entities = {e.name: e for e in result.entities}
    assert entities["Sorter.get_ready"].description.startswith("Returns a tuple")
    assert entities["Sorter.get_ready"].defines is True
    assert entities["Sorter.done"].defines is False
    assert entities["Sorter"].defines is False


def test_a_definition_that_only_points_elsewhere_does_not_define(extractor):
    """The glossary's "keyword argument" entry is "See argument.": the term's other
    statements describe it, as if it had no definition."""
    text = (
        "# Glossary\n\n"
        "keyword argument\n: See argument.\n\n"
        "awaitable\n: An object that can be used in an await expression.\n"
    )
    entities = {e.name: e for e in extractor.extract(text, entity_types=TYPES).entities}
    assert entities["keyword argument"].defines is False
    assert entities["awaitable"].defines is True


def test_code_names_in_prose_become_technologies_and_expressions_do_not(extractor):
    text = (
        "Use `os.path.join()` to build paths; it raises `TypeError` on bad input. "
        "Writing `x = 1` or `True` or `self.name` in code names nothing.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    types = _types(result)
    assert types["os.path.join"] == "technology"
    assert types["TypeError"] == "technology"
    assert {"os.path", "os"} <= set(types)
    assert ("os.path.join", "part_of", "os.path") in _triples(result)
    assert ("os.path", "part_of", "os") in _triples(result)
    assert not {"x = 1", "x", "True", "self.name", "self"} & set(types)


def test_dunder_names_are_not_emphasis_and_bare_ones_name_nothing(extractor):
    text = (
        "Source code: Lib/collections/\\_\\_init\\_\\_.py\n\n"
        "The `collections.UserDict.__getitem__()` method and a bare `__init__()` call. "
        "Subclasses override `__getitem__` as needed.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    names = set(_types(result))
    assert not {"init", "getitem", "__init__", "__getitem__", "_init_"} & names
    assert "collections.UserDict.__getitem__" in names


def test_code_blocks_are_never_read_as_prose(extractor):
    text = (
        "The example prints a greeting.\n\n"
        "```\nimport asyncio\nasync def main():\n    print('Hello Guido van Rossum')\n```\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    assert "Guido van Rossum" not in _types(result)


def test_link_to_another_page_is_a_reference_with_its_sentence_as_evidence(extractor):
    text = "Tasks are described in Coroutines and Tasks, and streams elsewhere.\n"
    context = WindowContext(title="asyncio — Asynchronous I/O", links=("Coroutines and Tasks",))
    result = extractor.extract(text, entity_types=TYPES, context=context)

    reference = next(r for r in result.relations if r.type == "references")
    assert (reference.source, reference.target) == ("asyncio", "Coroutines and Tasks")
    assert reference.span is not None
    assert text[slice(*reference.span)] == text.strip()
    subject = next(e for e in result.entities if e.name == "asyncio")
    assert subject.spans == ()  # the title is not in this window: an unlocated mention


def test_a_camel_case_heading_names_code_and_words_name_a_concept(extractor):
    text = (
        "# enum — Support for enumerations\n\n"
        "## IntFlag\n\nIntFlag is the same as Flag, but its members are integers.\n\n"
        "## Flag Members\n\nMembers can be combined with the bitwise operators.\n"
    )
    result = extractor.extract(text, entity_types=TYPES, context=WindowContext(title="enum"))

    types = _types(result)
    assert types["IntFlag"] == "technology"
    assert types["Flag Members"] == "concept"


def test_a_statement_wrapped_over_lines_is_read_whole_but_not_past_its_block(extractor):
    # The parsers keep a page's line breaks inside a paragraph or a list item.
    text = (
        "## Changes\n\n"
        "- Converting between `int` and `str` in bases other than 2\n"
        "now raises a `ValueError` if the number of digits in string form is\n"
        "above a limit.\n"
        "- `TypeError` is raised for the rest.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    found = {e.name: e for e in result.entities}
    assert found["ValueError"].description == (
        "Converting between int and str in bases other than 2 now raises a ValueError if the "
        "number of digits in string form is above a limit."
    )
    assert found["TypeError"].description == "TypeError is raised for the rest."


def test_a_code_name_in_a_headerless_table_row_is_described_by_the_row(extractor):
    # The module index: a table whose rows have no header to name their columns.
    text = (
        "| | `itertools` | *Functions creating iterators for efficient looping.* |\n"
        "| | `json` | *Encode and decode the JSON format.* |\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    found = {e.name: e for e in result.entities}
    assert found["itertools"].description == (
        "itertools: Functions creating iterators for efficient looping."
    )


def test_a_description_is_words_without_the_marks_around_them(extractor):
    # The sentence splitter starts the second sentence after "**": its marks come in too.
    text = (
        "The cgi module is going away. **Deprecated:** *Helpers for running Python scripts "
        "via the Common Gateway Interface.*\n\n"
        "Implementations of `process_message` use the `**kwargs` signature.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    found = {e.name: e for e in result.entities}
    assert found["Common Gateway Interface"].description == (
        "Deprecated: Helpers for running Python scripts via the Common Gateway Interface."
    )
    assert found["process_message"].description == (
        "Implementations of process_message use the **kwargs signature."
    )


def test_a_title_that_names_a_document_is_a_work(extractor):
    text = "See the Functional Programming HOWTO and the notes on reference counts.\n"
    title = "What\u2019s New In Python 3.5"  # the manual's apostrophe
    context = WindowContext(title=title, links=("Functional Programming HOWTO",))
    result = extractor.extract(text, entity_types=TYPES, context=context)

    types = _types(result)
    assert types[title] == "work"
    assert types["Functional Programming HOWTO"] == "work"


def test_a_link_is_found_as_a_whole_word_only(extractor):
    text = "A string is strict about `str`.\n\nConvert with str when it is an instance.\n"
    context = WindowContext(title="Built-in Types", links=("str", "int"))
    result = extractor.extract(text, entity_types=TYPES, context=context)

    found = {e.name: e for e in result.entities}
    assert [text[slice(*span)] for span in found["str"].spans] == ["str", "str"]
    assert all(text[span[1]].isspace() or text[span[1]] == "`" for span in found["str"].spans)
    assert "int" not in found  # only inside "instance"


def test_generic_link_text_is_no_reference(extractor):
    text = "For details, click here.\n"
    context = WindowContext(title="asyncio", links=("here",))
    result = extractor.extract(text, entity_types=TYPES, context=context)

    assert not [r for r in result.relations if r.type == "references"]


def test_table_rows_with_a_header_name_their_first_column(extractor):
    text = (
        "| Function | Description |\n"
        "| --- | --- |\n"
        "| `create_task()` | Start running a coroutine. |\n"
        "| `wait_for()` | Run with a timeout. |\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    entities = {e.name: e for e in result.entities}
    assert entities["create_task"].type == "technology"
    assert entities["create_task"].description == "Description: Start running a coroutine."
    assert "wait_for" in entities
    assert "Function" not in entities and "Description" not in entities


def test_technical_text_does_not_make_people_and_places_of_single_names(extractor):
    text = (
        "Python runs on Windows and Linux. The `sys.path` list is searched first. "
        "Python raises TypeError when an argument has the wrong type.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    wrong = {name: t for name, t in _types(result).items() if t in {"person", "location"}}
    assert wrong == {}


def test_languages_in_technical_text_are_concepts_not_software(extractor):
    text = (
        "The `cp1251` codec covers Bulgarian, Russian and Serbian; `cp1253` covers Greek. "
        "Use `codecs.lookup()` to find one.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    types = _types(result)
    languages = {
        n: t for n, t in types.items() if n in {"Bulgarian", "Russian", "Serbian", "Greek"}
    }
    assert languages and set(languages.values()) == {"concept"}


def test_class_shaped_names_are_technologies_even_in_prose_without_code(extractor):
    text = (
        "Python emits a ResourceWarning when a file is left open, and the BaseHandler "
        "class passes requests on. The Python Software Foundation is based in Beaverton, "
        "Oregon, and its director met Guido van Rossum in Amsterdam.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    types = _types(result)
    assert types["ResourceWarning"] == "technology"
    assert types["BaseHandler"] == "technology"
    assert types["Guido van Rossum"] == "person"  # prose without code keeps the model's people
    assert types["Amsterdam"] == "location"


def test_names_after_in_are_no_places_in_technical_text(extractor):
    text = (
        "The `asyncio` module is written in Python and C, and strings are stored in UTF-8. "
        "It runs on Windows and Linux, and `os.fork()` is not available on Windows. "
        "Code written in Python 2.0 differs.\n"
    )
    result = extractor.extract(text, entity_types=TYPES)

    places = {n for n, t in _types(result).items() if t == "location"}
    assert places == set()
    assert _types(result).get("Python") == "technology"


def test_an_api_index_without_backticks_is_read_as_technical_text(extractor):
    text = (
        "abort() (asyncio.Barrier method)\n(asyncio.DatagramTransport method)\n"
        "AbstractEventLoop (class in asyncio)\nAbstractChildWatcher (class in asyncio)\n"
        "acquire() (_thread.lock method)\n(asyncio.Condition method)\n"
        "a85decode() (in module base64)\nabiflags (in module sys)\n"
    )
    assert looks_technical(text)
    assert not looks_technical(
        "Guido van Rossum created Python at CWI in the Netherlands, e.g. as a hobby; see "
        "www.python.org or write to info@python.org, i.e. the foundation in the U.S."
    )
    result = extractor.extract(text, entity_types=TYPES, context=WindowContext(technical=True))

    wrong = {n: t for n, t in _types(result).items() if t in {"person", "location"}}
    assert wrong == {}
    assert not [n for n in _types(result) if n.startswith(("module ", "class "))]


def test_window_context_is_part_of_the_hash_and_no_context_hashes_as_before():
    import hashlib

    text = "Some text."
    assert window_hash(text) == hashlib.sha256(text.encode()).hexdigest()
    assert window_hash(text, NO_CONTEXT) == window_hash(text)
    assert window_hash(text, WindowContext(title="A")) != window_hash(text)
    assert window_hash(text, WindowContext(title="A")) != window_hash(
        text, WindowContext(title="B")
    )
