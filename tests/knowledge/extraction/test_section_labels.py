"""Section labels a source repeats are its structure, not entities
(knowledge/selectors/section_labels.py, knowledge/actions/extraction/materialize.py).

Three small sources of hand-made HTML pages in the shapes of three generators (manual
pages, an API reference of classes, a reference of functions with parameter sections) go
through the real pipeline, against a real local chat-completions server playing a model
that names every heading it sees, labels included. The labels every page of a source
repeats are learnt and make no entity, mention or relation end; a heading that one page
has stays a heading and names its entity; a person's override, either way, takes effect
when the source is extracted again.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from ingest.actions.sources import do_create_upload_source
from ingest.models import Document, DocumentStatus, Source
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.actions.extraction.section_labels import do_set_section_label
from knowledge.models import Entity, EntityState, Mention, Relation
from knowledge.selectors.section_labels import (
    headings,
    label_key,
    learnt_section_labels,
    looks_like_name,
    section_labels,
    structure_label_keys,
)
from tests.knowledge.conftest import World
from tests.knowledge.section_label_data import make_source
from tests.support import run_pending

pytestmark = pytest.mark.django_db


def page(title: str, sections: list[tuple[str, str]]) -> bytes:
    body = "".join(f"<h2>{heading}</h2>\n{content}\n" for heading, content in sections)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body><main>"
        f"<h1>{title}</h1>\n{body}</main></body></html>"
    ).encode()


# Manual pages: NAME, SYNOPSIS, DESCRIPTION, SEE ALSO on each; one page has a section of
# its own (the near miss).
MANUAL = {
    "frob.html": page(
        "frob",
        [
            ("NAME", "<p>frob - frobnicate a spool of yarn</p>"),
            ("SYNOPSIS", "<pre>frob [-v] spool</pre>"),
            ("DESCRIPTION", "<p>The frob command winds the spool on the Quillwheel.</p>"),
            ("Quillwheel", "<p>The Quillwheel is the loom's winding drum.</p>"),
            ("SEE ALSO", "<p>knit, purl</p>"),
        ],
    ),
    "knit.html": page(
        "knit",
        [
            ("NAME", "<p>knit - join two spools of yarn</p>"),
            ("SYNOPSIS", "<pre>knit first second</pre>"),
            ("DESCRIPTION", "<p>The knit command joins two spools into one.</p>"),
            ("SEE ALSO", "<p>frob</p>"),
        ],
    ),
    "purl.html": page(
        "purl",
        [
            ("NAME", "<p>purl - reverse a stitch</p>"),
            ("SYNOPSIS", "<pre>purl stitch</pre>"),
            ("DESCRIPTION", "<p>The purl command reverses the last stitch.</p>"),
            ("SEE ALSO", "<p>knit</p>"),
        ],
    ),
    "tangle.html": page(
        "tangle",
        [
            ("NAME", "<p>tangle - knot the yarn on purpose</p>"),
            ("SYNOPSIS", "<pre>tangle spool</pre>"),
            ("DESCRIPTION", "<p>The tangle command knots a spool for testing.</p>"),
            ("SEE ALSO", "<p>frob</p>"),
        ],
    ),
}

# An API reference of classes: summaries and details on each class page.
CLASSES = {
    f"{name}.html": page(
        f"Class {name}",
        [
            ("Constructor Summary", f"<p>{name}() makes a new {name} for a Bobbin.</p>"),
            ("Method Summary", f"<p>{name}.spin() spins the {name}.</p>"),
            ("Constructor Detail", f"<p>Creates a {name} with default settings.</p>"),
            ("Method Detail", f"<p>spin turns the {name} once.</p>"),
        ],
    )
    for name in ("Spindle", "Bobbin", "Treadle")
}

# A reference of functions: each with Parameters, Returns and Notes.
FUNCTIONS = {
    f"{name}.html": page(
        f"gearbox.{name}",
        [
            ("Parameters", f"<dl><dt>ratio</dt><dd>The ratio {name} uses.</dd></dl>"),
            ("Returns", "<p>The new gear.</p>"),
            ("Notes", f"<p>gearbox.{name} never slips, unlike gearbox.clutch.</p>"),
        ],
    )
    for name in ("shift", "clutch", "idle")
}

LABELS = {
    "NAME": "concept",
    "SYNOPSIS": "concept",
    "DESCRIPTION": "concept",
    "SEE ALSO": "concept",
    "Constructor Summary": "concept",
    "Method Summary": "concept",
    "Constructor Detail": "concept",
    "Method Detail": "concept",
    "Parameters": "concept",
    "Returns": "concept",
    "Notes": "concept",
}
SUBJECTS = {
    "frob": "technology",
    "knit": "technology",
    "Quillwheel": "product",
    "Spindle": "technology",
    "Bobbin": "technology",
    "gearbox.shift": "technology",
    "gearbox.clutch": "technology",
}
RELATIONS = [
    ("DESCRIPTION", "frob", "part_of"),
    ("frob", "Quillwheel", "uses"),
    ("Method Summary", "Spindle", "part_of"),
    ("Spindle", "Bobbin", "related_to"),
    ("Notes", "gearbox.shift", "part_of"),
    ("gearbox.shift", "gearbox.clutch", "related_to"),
]


@pytest.fixture
def model(llm):
    """A model that names every heading it sees (labels too) and the subjects."""
    llm.responder = World(entities={**LABELS, **SUBJECTS}, relations=RELATIONS)
    return llm


def ingest(workspace, name: str, files: dict[str, bytes]) -> Source:
    source, _ = do_create_upload_source(
        workspace=workspace, name=name, files=[(path, [data]) for path, data in files.items()]
    )
    run_pending(source)
    source.refresh_from_db()
    return source


def active_names(workspace) -> set[str]:
    return set(
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .values_list("name", flat=True)
    )


def mentioned(workspace, name: str) -> int:
    return Mention.objects.filter(workspace=workspace, entity__name=name).count()


def relation_ends(workspace) -> set[str]:
    return {
        name
        for pair in Relation.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .values_list("source__name", "target__name")
        for name in pair
    }


def test_labels_every_page_of_a_source_repeats_are_learnt_per_generator(model, alice):
    manual = ingest(alice.workspace, "manual", MANUAL)
    classes = ingest(alice.workspace, "classes", CLASSES)
    functions = ingest(alice.workspace, "functions", FUNCTIONS)

    learnt = {
        source.name: {
            label.text: label.documents for label in learnt_section_labels(alice.workspace, source)
        }
        for source in (manual, classes, functions)
    }
    assert learnt["manual"] == {"NAME": 4, "SYNOPSIS": 4, "DESCRIPTION": 4, "SEE ALSO": 4}
    assert learnt["classes"] == {
        "Constructor Summary": 3, "Method Summary": 3, "Constructor Detail": 3, "Method Detail": 3,
    }  # fmt: skip
    assert learnt["functions"] == {"Parameters": 3, "Returns": 3, "Notes": 3}


def test_a_learnt_label_makes_no_entity_mention_or_relation_end(model, alice):
    for name, files in (("manual", MANUAL), ("classes", CLASSES), ("functions", FUNCTIONS)):
        ingest(alice.workspace, name, files)

    names = active_names(alice.workspace)
    assert not names & set(LABELS), names & set(LABELS)
    assert all(mentioned(alice.workspace, label) == 0 for label in LABELS)
    assert not relation_ends(alice.workspace) & set(LABELS)
    # The subjects, and the relations between them, are all there.
    assert set(SUBJECTS) <= names
    assert {"frob", "Quillwheel", "Spindle", "Bobbin", "gearbox.shift"} <= relation_ends(
        alice.workspace
    )


def test_a_heading_on_one_page_only_stays_a_heading_and_names_its_entity(model, alice):
    manual = ingest(alice.workspace, "manual", MANUAL)

    assert "quillwheel" not in structure_label_keys(alice.workspace, manual)
    assert "Quillwheel" in active_names(alice.workspace)
    assert mentioned(alice.workspace, "Quillwheel") >= 2


def test_a_label_is_the_sources_own_another_source_may_name_an_entity_so(model, alice):
    """ "Notes" heads every page of the functions reference; in the manual, where no page has
    it as a heading, a page that names it still makes it an entity."""
    ingest(alice.workspace, "functions", FUNCTIONS)
    ingest(alice.workspace, "notes", {"notes.html": page("Release", [("Notes", "<p>Read.</p>")])})

    assert "Notes" in active_names(alice.workspace)
    assert Mention.objects.filter(
        entity__name="Notes", chunk__document__source__name="notes"
    ).exists()
    assert not Mention.objects.filter(
        entity__name="Notes", chunk__document__source__name="functions"
    ).exists()


def test_marking_a_learnt_label_not_structure_makes_it_an_entity_on_reextraction(model, alice):
    manual = ingest(alice.workspace, "manual", MANUAL)
    assert "DESCRIPTION" not in active_names(alice.workspace)

    do_set_section_label(
        workspace=alice.workspace, source=manual, label="Description", structure=False
    )
    assert "description" not in structure_label_keys(alice.workspace, manual)
    assert "DESCRIPTION" not in active_names(alice.workspace)  # not before re-extraction
    call_command(
        "extract", workspace=alice.workspace.slug, source=manual.pk, force=True, stdout=StringIO()
    )

    assert "DESCRIPTION" in active_names(alice.workspace)
    assert mentioned(alice.workspace, "DESCRIPTION") == 4
    assert "DESCRIPTION" in relation_ends(alice.workspace)
    # The others stay structure.
    assert not active_names(alice.workspace) & {"NAME", "SYNOPSIS", "SEE ALSO"}

    do_set_section_label(
        workspace=alice.workspace, source=manual, label="DESCRIPTION", structure=None
    )
    do_extract_source(source=manual, force=True)
    assert "DESCRIPTION" not in active_names(alice.workspace)


def test_adding_a_label_as_structure_removes_its_entity_on_reextraction(model, alice):
    manual = ingest(alice.workspace, "manual", MANUAL)
    assert "Quillwheel" in active_names(alice.workspace)

    do_set_section_label(
        workspace=alice.workspace, source=manual, label="**Quillwheel**", structure=True
    )
    labels = {label.key: label for label in section_labels(alice.workspace, manual)}
    assert labels["quillwheel"].structure and not labels["quillwheel"].learnt
    do_extract_source(source=manual)  # cached runs, nothing forced: the evidence goes too

    assert "Quillwheel" not in active_names(alice.workspace)
    assert mentioned(alice.workspace, "Quillwheel") == 0
    assert "Quillwheel" not in relation_ends(alice.workspace)
    assert "frob" in active_names(alice.workspace)


def test_a_label_learnt_after_its_first_pages_were_extracted_loses_their_evidence(model, alice):
    """A crawl's first pages are extracted before any heading repeats: their labels become
    entities; once the source repeats them, extracting its next pages gives that evidence
    back."""
    files = list(MANUAL.items())
    source, _ = do_create_upload_source(
        workspace=alice.workspace, name="manual", files=[(p, [d]) for p, d in files[:2]]
    )
    run_pending(source)
    assert "SYNOPSIS" in active_names(alice.workspace)

    from ingest.actions.sources import do_add_files

    do_add_files(source=source, files=[(p, [d]) for p, d in files[2:]])
    run_pending(source)

    assert "SYNOPSIS" not in active_names(alice.workspace)
    assert mentioned(alice.workspace, "SYNOPSIS") == 0


def test_label_keys_agree_across_case_marks_and_punctuation():
    assert label_key("SEE ALSO") == label_key("See also") == label_key("**See Also:**")
    assert label_key("`Returns`") == "returns"
    assert label_key("   ") == ""


def test_headings_are_read_as_the_chunker_reads_them_outside_code_blocks():
    text = (
        "# frob\n\n## NAME ##\n\nfrob - frobnicate\n\n```sh\n# comment, not a heading\n```\n\n"
        "  ### **See Also**\n\n## " + "A title far longer than any section label " * 3 + "\n"
    )
    # "frob", a command's name, is no label either.
    assert headings(text) == {"name": "NAME ##", "see also": "**See Also**"}


def test_a_heading_that_names_code_is_no_label():
    assert all(
        looks_like_name(raw)
        for raw in ("equals", "hashCode", "`JSONField`", "pub fn len(&self)", "get_config_vars",
                    "Methods declared in class java.lang.Object", "std::vec")
    )  # fmt: skip
    assert not any(
        looks_like_name(raw)
        for raw in ("SYNOPSIS", "Parameters", "See also", "Method Summary", "**Notes:**", "GIT")
    )


def test_a_heading_every_title_names_is_the_sources_subject_not_a_label(alice):
    """A manual of one tool's commands closes each page with a section named for the tool;
    the titles name it too: it is what the source is about."""
    source = make_source(
        alice.workspace,
        "tool",
        {f"kestrel-{c}(1) Manual Page": ["SYNOPSIS", "KESTREL"] for c in ("wind", "fly", "nest")},
    )
    assert [label.text for label in learnt_section_labels(alice.workspace, source)] == ["SYNOPSIS"]


def test_definition_terms_every_member_repeats_are_labels_but_a_glossary_term_is_not(alice):
    """Javadoc writes "Parameters:", "Returns:" and "Throws:" as definition-list terms under
    each member, not as headings: they are labels all the same. A term one page defines
    (a glossary's) stays a name."""
    source = Source.objects.create(workspace=alice.workspace, kind="upload", name="api")
    for index, name in enumerate(("Spindle", "Bobbin", "Treadle")):
        text = (
            f"# Class {name}\n\n## spin\n\nParameters:\n: `turns` - how often\n\n"
            f"Returns:\n: the {name.lower()}\n\nThrows:\n: `WarpError` - when it breaks\n\n"
        )
        if index == 0:
            text += "Warp Tension\n: How tight the warp is held.\n"
        Document.objects.create(
            workspace=alice.workspace, source=source, path=f"{index}.html",
            title=f"Class {name}", text=text, status=DocumentStatus.DONE,
            content_hash=f"api-{index}",
        )  # fmt: skip

    learnt = {label.key for label in learnt_section_labels(alice.workspace, source)}

    assert {"parameters", "returns", "throws"} <= learnt
    assert "warp tension" not in learnt
