"""What a page only uses to write about something is no entity: the slots of its synopses
and grammars, and the keywords of the language its code is written in, unless the page is
about the word. And one kind of name gets one type wherever it is met.

Small hand-made windows in the shapes of several generators' output, as the parsers turn
them into text: a DocBook reference page (italic replaceables, a synopsis block in
capitalised keywords), an AsciiDoc manual page (angle-bracketed slots in an escaped
synopsis paragraph), a Sphinx language reference (a `::=` grammar), an mdBook chapter. Each
with its near miss: a real lower-case identifier the page defines, a page about a keyword,
a capitalised section heading. The real packaged spaCy pipeline runs underneath.
"""

from __future__ import annotations

import pytest

from knowledge.extraction.entity_types import ner_type
from knowledge.extraction.offline import get_offline_extractor
from knowledge.extraction.structure import read_structure
from knowledge.extraction.windows import WindowContext, document_vocabulary

TYPES = ("person", "organization", "location", "product", "technology", "concept", "event", "work")

DOCBOOK_REFERENCE = """# CREATE GADGET

## Synopsis

```
CREATE [ TEMPORARY ] GADGET [ IF NOT EXISTS ] gadget_name ( [
  { part_name part_type [ COLLATE collation ] }
] )
```

## Description

`CREATE GADGET` will create a new, initially empty gadget. Read it back with `SELECT`, or
count its parts with `gadget_part_count()`. Each *`part_name`* must be distinct.

## Parameters

*`gadget_name`*
: The name (optionally schema-qualified) of the gadget to be created.

*`part_type`*
: The data type of the part; `gadget_part_count()` counts them.

`gadget_part_count()`
: Returns how many parts a gadget has.
"""

ASCIIDOC_MANPAGE = r"""## SYNOPSIS

*git frob* \[--verbose | -v\] \[--dry-run | -n\] \[--from-file=\<listfile>\] \[\<pathspec>…\]

## DESCRIPTION

This command frobs the index. The `git frob` command reads the `pathspec` and the
`listfile` given, and calls `frob_helper` for each file.

## OPTIONS

\<pathspec>…
: Files to frob.
"""

SPHINX_GRAMMAR = """# 7.9. The leave statement

```
leave_stmt ::= "leave" [label_list]
label_list ::= identifier ("," identifier)*
```

`leave` may only occur in a loop body; it leaves every loop named in `label_list`.
The `break_loop_frame` function does the work.

`break_loop_frame(frame)`
: Unwinds the frame of the innermost loop.
"""


@pytest.fixture(scope="module")
def extractor():
    return get_offline_extractor()


def _types(text, context):
    result = get_offline_extractor().extract(text, entity_types=TYPES, context=context)
    return {e.name: e.type for e in result.entities}


# --- placeholders --------------------------------------------------------------------------


def test_structure_learns_slots_from_italic_code_angle_brackets_and_synopses():
    assert read_structure(DOCBOOK_REFERENCE).placeholders >= {
        "gadget_name",
        "part_name",
        "part_type",
        "collation",
    }
    assert read_structure(ASCIIDOC_MANPAGE).placeholders >= {"pathspec", "listfile"}
    assert read_structure(SPHINX_GRAMMAR).placeholders >= {"label_list", "identifier"}
    # The command a synopsis documents, its options and a grammar's literals are no slots.
    assert not read_structure(ASCIIDOC_MANPAGE).placeholders & {"git", "verbose", "dry-run"}
    assert "leave" not in read_structure(SPHINX_GRAMMAR).placeholders


def test_docbook_replaceables_are_no_entities_but_a_function_the_page_defines_is(extractor):
    types = _types(DOCBOOK_REFERENCE, WindowContext(title="CREATE GADGET", technical=True))

    for slot in ("gadget_name", "part_name", "part_type", "collation"):
        assert slot not in types
    assert types["gadget_part_count"] == "technology"


def test_manpage_angle_bracketed_slots_are_no_entities_but_a_helper_it_names_is(extractor):
    types = _types(ASCIIDOC_MANPAGE, WindowContext(title="git-frob(1) Manual Page", technical=True))

    assert "pathspec" not in types
    assert "listfile" not in types
    assert types["frob_helper"] == "technology"


def test_grammar_symbols_are_no_entities_but_a_function_the_page_defines_is(extractor):
    types = _types(SPHINX_GRAMMAR, WindowContext(title="7.9. The leave statement", technical=True))

    assert "label_list" not in types
    assert types["break_loop_frame"] == "technology"


def test_a_slot_named_in_prose_without_a_synopsis_stays_a_code_name(extractor):
    text = "Pass the `gadget_name` of an existing gadget to `gadget_part_count()`.\n"
    types = _types(text, WindowContext(title="Counting parts", technical=True))

    assert types["gadget_name"] == "technology"


# --- keywords ------------------------------------------------------------------------------


def test_keywords_in_a_reference_page_are_no_entities(extractor):
    types = _types(DOCBOOK_REFERENCE, WindowContext(title="CREATE GADGET", technical=True))

    assert "SELECT" not in types  # another command's keyword, met in running text
    assert "COLLATE" not in types
    assert types["CREATE GADGET"] == "technology"  # the page is about it


def test_the_page_about_a_keyword_keeps_it_as_its_subject(extractor):
    text = """# SELECT

## Synopsis

```
SELECT [ ALL | DISTINCT ] expression [, ...]
    FROM from_item [, ...]
```

`SELECT` retrieves rows from zero or more gadgets.
"""
    types = _types(text, WindowContext(title="SELECT", technical=True))

    assert types["SELECT"] == "technology"
    assert "FROM" not in types
    assert "from_item" not in types


def test_a_language_keyword_is_an_entity_only_on_its_own_page(extractor):
    # mdBook-shaped chapters of a language book: `match` is a keyword of the language.
    elsewhere = (
        "# Control Flow\n\nUse `match` or `if` to branch, and `loop` to repeat; "
        "`std::process::exit` ends the program.\n"
    )
    own_page = "# match\n\nThe `match` keyword compares a value against a series of patterns.\n"

    assert "match" not in _types(elsewhere, WindowContext(title="Control Flow", technical=True))
    assert _types(own_page, WindowContext(title="match", technical=True))["match"] == ("technology")


def test_capitalised_names_are_keywords_only_where_the_code_is_written_in_them(extractor):
    # Shell documentation: environment variables in capitals, no keyword language.
    text = (
        "# Environment\n\n```\nexport GADGET_HOME=$HOME/gadgets\n```\n\n"
        "The `PATH` and `GADGETRC` variables are read at start.\n"
    )
    types = _types(text, WindowContext(title="Environment", technical=True))

    assert types["PATH"] == "technology"
    assert types["GADGETRC"] == "technology"


# --- one name, one type ----------------------------------------------------------------------


def test_a_command_has_one_type_on_its_page_in_links_and_in_code(extractor):
    own_page = _types(
        "# VACUUM\n\nVACUUM reclaims storage occupied by dead gadgets.\n",
        WindowContext(title="VACUUM", technical=True),
    )
    other_page = _types(
        "# Routine maintenance\n\nRun `VACUUM` nightly; see also VACUUM FULL and ANALYZE.\n",
        WindowContext(
            title="Routine maintenance", links=("VACUUM FULL", "ANALYZE"), technical=True
        ),
    )

    assert own_page["VACUUM"] == "technology"
    assert other_page["VACUUM"] == "technology"
    assert other_page["VACUUM FULL"] == "technology"
    assert other_page["ANALYZE"] == "technology"


def test_a_capitalised_section_heading_is_no_command(extractor):
    types = _types(ASCIIDOC_MANPAGE, WindowContext(title="git-frob(1)", technical=True))

    assert types.get("DESCRIPTION", "concept") == "concept"
    assert types.get("OPTIONS", "concept") == "concept"


def test_a_product_named_with_a_grown_on_acronym_is_never_a_place_or_a_person():
    # Prose without code keeps the model's labels, except for a shape only software has.
    assert ner_type("GPE", "HarbourSQL", technical=False, locative=True) == "technology"
    assert ner_type("PERSON", "LibreCAD", technical=False, locative=False) == "technology"
    assert ner_type("GPE", "McAllen", technical=False, locative=True) == "location"
    assert ner_type("PERSON", "DeKalb", technical=False, locative=False) == "person"


# --- what the whole document's code says -----------------------------------------------------


def test_a_window_without_the_synopsis_knows_the_slots_from_its_documents_context(extractor):
    # A long reference page: its last window holds the parameter list, whose terms the
    # generator wrote as plain code, and no synopsis.
    page = DOCBOOK_REFERENCE.replace("*`", "`").replace("`*", "`")
    last_window = page[page.index("## Parameters") :]
    placeholders, keywords = document_vocabulary(page)
    alone = WindowContext(title="CREATE GADGET", technical=True)
    informed = WindowContext(
        title="CREATE GADGET", technical=True, placeholders=placeholders, keywords=keywords
    )

    assert "gadget_name" in _types(last_window, alone)  # the window alone cannot tell
    types = _types(last_window, informed)
    assert "gadget_name" not in types
    assert "part_type" not in types
    assert types["gadget_part_count"] == "technology"


def test_a_context_without_a_vocabulary_hashes_as_before():
    context = WindowContext(title="CREATE GADGET", headings=("Parameters",), technical=True)

    assert context.key() == '["CREATE GADGET", ["Parameters"], [], true]'
    assert WindowContext(title="CREATE GADGET", placeholders=("gadget_name",)).key() != (
        WindowContext(title="CREATE GADGET").key()
    )


def test_a_manual_page_is_one_entity_on_its_page_and_in_links_to_it(extractor):
    # AsciiDoc's and mandoc's titles for a manual page, and links to it from other pages.
    asciidoc = _types(
        "## DESCRIPTION\n\nFrobs the index.\n",
        WindowContext(title="git-frob(1) Manual Page", technical=True),
    )
    mandoc = _types("## NAME\n\nfrobtab - frob tables\n", WindowContext(title="FROBTAB(5)"))
    linking = _types(
        "## SEE ALSO\n\nSee git-frob(1), frobtab(5) and gitfrobbing(7) for more.\n",
        WindowContext(
            title="git-unfrob(1) Manual Page",
            links=("git-frob(1)", "frobtab(5)", "gitfrobbing(7)"),
            technical=True,
        ),
    )

    assert asciidoc["git-frob"] == linking["git-frob"] == "technology"
    assert mandoc["FROBTAB"] == linking["frobtab"] == "technology"
    assert linking["gitfrobbing"] == "concept"  # section 7: an overview, not a command
    assert "git-frob(1) Manual Page" not in asciidoc


# --- the same, through extraction of a stored document -------------------------------------


def _filler(paragraphs: int) -> str:
    return "\n\n".join(
        f"Gadget note {i}: a gadget keeps its parts in order and reports them when asked. "
        + " ".join(f"Remark {i}.{j} says the order of parts never changes." for j in range(12))
        for i in range(paragraphs)
    )


@pytest.mark.django_db
def test_a_long_pages_later_window_knows_the_synopsis_slots_when_extracted(ingest_text):
    """The document's vocabulary reaches every window's context when a stored document is
    extracted: the parameter list, windows after its synopsis, makes no entity of a slot."""
    from knowledge.models import Entity

    synopsis, rest = DOCBOOK_REFERENCE.split("## Description", 1)
    parameters = rest[rest.index("## Parameters") :].replace("*`", "`").replace("`*", "`")
    ingest_text(f"{synopsis}\n\n{_filler(14)}\n\n{parameters}", title="CREATE GADGET")

    names = set(Entity.objects.values_list("name", flat=True))
    assert "gadget_name" not in names
    assert "part_type" not in names
    assert any("gadget_part_count" in name for name in names)  # the near miss stays


# --- an example's letters ------------------------------------------------------------------

ASCIIDOC_HISTORY = """## DISCUSSION

In the history below, `C` does not change `foo`, but its merge `N` changes it to
"foobar". The merge commit `R`, however, was made by `git merge-ort`. The commits `A`,
`B` and `X` reach `frob_index()` in different ways.
"""

TEXINFO_GRAPH = """# 4.2 Merge bases

Given three commits A, B and C, the merge base is computed for this history:

```
         o---o---C
        /
  ---2---1---o---A
```
"""

SPHINX_PROSE = "For variables X, Y, or Z, `fmean()` weighs each one.\n"


def test_letters_an_example_names_things_by_are_its_variables():
    assert read_structure(ASCIIDOC_HISTORY).placeholders >= {"a", "b", "c", "n", "r", "x"}
    assert read_structure(TEXINFO_GRAPH).placeholders >= {"a", "b", "c"}
    assert read_structure(SPHINX_PROSE).placeholders >= {"x", "y", "z"}
    # Near misses: a lone letter in prose (a language), two letters, a call's arguments.
    for text in ("It is written in C and R.", "Merge A and B first.", "class A(B, C): pass"):
        assert not read_structure(text).placeholders & {"a", "b", "c", "r"}


def test_an_examples_letters_are_no_entities_but_a_function_beside_them_is(extractor):
    types = _types(ASCIIDOC_HISTORY, WindowContext(title="git-shortlog(1)", technical=True))

    assert not {"A", "B", "C", "N", "R", "X"} & set(types)
    assert types["frob_index"] == "technology"
