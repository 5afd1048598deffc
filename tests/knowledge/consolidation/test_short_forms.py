"""Short forms within a document (knowledge/consolidation/short_forms.py, resolution's
`short_form_plan` / `record_short_forms`, called by the materializer): a shorter name of the
same type that is the head, a person's first name or surname, or an acronym of a full name
the document used before joins that name's entity as an alias; an ambiguous one goes to the
review queue; common words, locations, dropped numbers and other types never do."""

from __future__ import annotations

import hashlib
import re

import pytest

from ingest.models import Chunk, Document, DocumentStatus, Source, SourceKind, SourceStatus
from knowledge.actions.extraction.materialize import Materializer
from knowledge.actions.extraction.runs import EnsuredRuns, document_windows
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.consolidation.short_forms import DocName, plan_short_forms
from knowledge.models import (
    Alias,
    AliasOrigin,
    CurationEvent,
    Entity,
    ExtractionRun,
    Mention,
    MergeSuggestion,
)
from knowledge.selectors.entities import search_entities

# --- The plan (pure) ------------------------------------------------------------------------


def doc_names(text: str, names: list[tuple[str, str]]) -> list[DocName]:
    """Names with every whole-word place not inside a longer listed name (longest first)."""
    taken = [False] * len(text)
    out = []
    for name, kind in sorted(names, key=lambda n: -len(n[0])):
        places = []
        for match in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text):
            if not any(taken[match.start() : match.end()]):
                places.append(match.span())
                taken[match.start() : match.end()] = [True] * (match.end() - match.start())
        out.append(DocName(name, (name.casefold(), hash(kind)), kind, tuple(places)))
    return out


def plan(text: str, *names: tuple[str, str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    found = plan_short_forms(doc_names(text, list(names)), text)
    return (
        {key[0]: full.name for key, full in found.resolved.items()},
        {key[0]: sorted(f.name for f in fulls) for key, fulls in found.ambiguous.items()},
    )


def test_the_head_of_a_product_name_is_its_short_form():
    text = "The Kestrel Navigation System is new. Kestrel works where GPS fails."
    resolved, _ = plan(text, ("Kestrel Navigation System", "product"), ("Kestrel", "product"))
    assert resolved == {"kestrel": "Kestrel Navigation System"}


def test_a_code_name_shortened_after_its_qualified_form_is_a_short_form():
    text = "Raise unittest.SkipTest to skip. SkipTest takes a reason."
    resolved, _ = plan(text, ("unittest.SkipTest", "technology"), ("SkipTest", "technology"))
    assert resolved == {"skiptest": "unittest.SkipTest"}
    text = "multiprocessing.SimpleQueue and queue.SimpleQueue differ. A SimpleQueue is simple."
    resolved, ambiguous = plan(
        text,
        ("multiprocessing.SimpleQueue", "technology"),
        ("queue.SimpleQueue", "technology"),
        ("SimpleQueue", "technology"),
    )
    assert resolved == {}
    assert ambiguous == {"simplequeue": ["multiprocessing.SimpleQueue", "queue.SimpleQueue"]}


def test_a_person_s_surname_or_first_name_is_a_short_form_but_not_before_the_full_name():
    text = "Jonas Lindqvist spoke first. Lindqvist said Jonas would stay."
    resolved, _ = plan(
        text, ("Jonas Lindqvist", "person"), ("Lindqvist", "person"), ("Jonas", "person")
    )
    assert resolved == {"lindqvist": "Jonas Lindqvist", "jonas": "Jonas Lindqvist"}
    earlier = "Lindqvist quits. Jonas Lindqvist will leave in May."
    assert plan(earlier, ("Jonas Lindqvist", "person"), ("Lindqvist", "person")) == ({}, {})
    honorific = "Dr. Priya Raman presented. Dr. Raman and Raman's team agreed."
    resolved, _ = plan(
        honorific, ("Dr. Priya Raman", "person"), ("Dr. Raman", "person"), ("Raman", "person")
    )
    assert resolved == {"dr. raman": "Dr. Priya Raman", "raman": "Dr. Priya Raman"}


def test_an_introduced_acronym_or_the_initials_of_a_full_name_is_a_short_form():
    text = "Vantage Aerospace Corporation (VAC) won. VAC will deliver. The EGCA agreed."
    resolved, _ = plan(
        text + " European Grid Coordination Agency.",
        ("Vantage Aerospace Corporation", "organization"),
        ("VAC", "organization"),
    )
    assert resolved == {"vac": "Vantage Aerospace Corporation"}
    text = "The European Grid Coordination Agency met. The EGCA agreed."
    resolved, _ = plan(
        text, ("European Grid Coordination Agency", "organization"), ("EGCA", "organization")
    )
    assert resolved == {"egca": "European Grid Coordination Agency"}
    # Letters that are not the full name's: no short form, introduced or not.
    text = "Kestrel Navigation System (KXQ) ships. KXQ is late."
    assert plan(text, ("Kestrel Navigation System", "product"), ("KXQ", "product")) == ({}, {})


def test_a_company_s_name_without_its_legal_suffix_is_a_short_form():
    text = "Helios Robotics Inc. opened a plant. Helios will hire 300 people."
    resolved, _ = plan(text, ("Helios Robotics Inc.", "organization"), ("Helios", "organization"))
    assert resolved == {"helios": "Helios Robotics Inc."}


def test_a_code_name_qualified_more_and_less_is_one_full_name_for_its_short_form():
    """graphlib's page names "TopologicalSorter.get_ready" before the qualified
    "graphlib.TopologicalSorter.get_ready": "get_ready" is a short form of the longest, not
    a question between the two, and so is the shorter qualified name, though it came
    first (on the whole manual the three stayed three entities)."""
    text = (
        "Call TopologicalSorter.get_ready first. graphlib.TopologicalSorter.get_ready() "
        "returns nodes. get_ready may return nothing."
    )
    resolved, ambiguous = plan(
        text,
        ("graphlib.TopologicalSorter.get_ready", "technology"),
        ("TopologicalSorter.get_ready", "technology"),
        ("get_ready", "technology"),
    )
    # A code name is one API before its qualified form too.
    assert resolved == {
        "get_ready": "graphlib.TopologicalSorter.get_ready",
        "topologicalsorter.get_ready": "graphlib.TopologicalSorter.get_ready",
    }
    assert ambiguous == {}


def test_a_module_member_is_no_short_form_of_the_same_named_class_member():
    """datetime's page: the module and its class are both "datetime". The class
    `datetime.date`, whose own members the page names, is not the method
    `datetime.datetime.date`; `socket.recv`, with no members, is the method."""
    text = (
        "datetime.datetime.date() returns the date. "
        "class datetime.date holds a day; datetime.date.today() returns today."
    )
    names = (("datetime.datetime.date", "technology"), ("datetime.date", "technology"))
    assert plan(text, *names, ("datetime.date.today", "technology")) == ({}, {})
    text = "socket.socket.recv() reads bytes. Call socket.recv with a buffer size."
    resolved, _ = plan(text, ("socket.socket.recv", "technology"), ("socket.recv", "technology"))
    assert resolved == {"socket.recv": "socket.socket.recv"}


def test_a_short_form_of_two_full_names_in_the_document_is_ambiguous():
    text = "Helios Robotics Inc. raised money from Helios Capital. Helios said so."
    resolved, ambiguous = plan(
        text,
        ("Helios Robotics Inc.", "organization"),
        ("Helios Capital", "organization"),
        ("Helios", "organization"),
    )
    assert resolved == {}
    assert ambiguous == {"helios": ["Helios Capital", "Helios Robotics Inc."]}


def test_a_concept_a_technology_or_a_code_name_has_no_part_for_a_short_form():
    """Python manual: a description's head is a thing of its own, and so is a code name's
    prefix; an acronym still stands for its words."""
    text = "The Unicode Character Database lists code points. Unicode is a standard."
    assert plan(text, ("Unicode Character Database", "technology"), ("Unicode", "technology")) == (
        {},
        {},
    )
    text = "Exception Handling comes first. An Exception is raised."
    assert plan(text, ("Exception Handling", "concept"), ("Exception", "concept")) == ({}, {})
    text = "PyCapsule_GetName returns the name. A PyCapsule holds a pointer."
    assert plan(text, ("PyCapsule_GetName", "product"), ("PyCapsule", "product")) == ({}, {})
    text = "The method resolution order (MRO) decides. The MRO is C3."
    resolved, _ = plan(text, ("method resolution order", "concept"), ("MRO", "concept"))
    assert resolved == {"mro": "method resolution order"}


def test_common_words_tails_numbers_places_and_other_types_are_not_short_forms():
    text = "The Kestrel Navigation System shipped. The System has logged 40 trips."
    assert plan(text, ("Kestrel Navigation System", "product"), ("System", "product")) == ({}, {})
    text = "General Kinetics Corporation grew. General said nothing. Navigation rose."
    assert plan(
        text, ("General Kinetics Corporation", "organization"), ("General", "organization")
    ) == ({}, {})
    text = "Helios Robotics Inc. grew. Robotics is hard."
    assert plan(text, ("Helios Robotics Inc.", "organization"), ("Robotics", "organization")) == (
        {},
        {},
    )
    text = "The Halo Ultrasound Scanner 3 is out. The Halo line sells well."
    assert plan(text, ("Halo Ultrasound Scanner 3", "product"), ("Halo", "product")) == ({}, {})
    text = "The ferry from New Halden stops. Halden loses its link."
    assert plan(text, ("New Halden", "location"), ("Halden", "location")) == ({}, {})
    text = "Kestrel Dynamics Ltd makes the Kestrel Navigation System. Kestrel is a brand."
    resolved, _ = plan(
        text,
        ("Kestrel Dynamics Ltd", "organization"),
        ("Kestrel Navigation System", "product"),
        ("Kestrel", "organization"),
    )
    assert resolved == {"kestrel": "Kestrel Dynamics Ltd"}  # the organisation, not the product
    text = "Lucas Moreau won. The Moreau Foundation paid. moreau agreed."
    assert plan(text, ("Moreau Foundation", "organization"), ("moreau", "organization")) == (
        {},
        {},
    )  # not capitalised


# --- Through the materializer ---------------------------------------------------------------


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def write(alice):
    """Materialise a document whose extraction gave exactly `names` (name -> type)."""
    workspace = alice.workspace
    do_ensure_default_schema(workspace=workspace)
    source = Source.objects.create(
        workspace=workspace, kind=SourceKind.TEXT, name="notes", status=SourceStatus.DONE
    )

    def materialise(text: str, names: dict[str, str], *, path: str = "a.txt") -> Document:
        document = Document.objects.create(
            workspace=workspace, source=source, path=path, title=path, text=text,
            status=DocumentStatus.EXTRACTED, content_hash=_sha(text),
        )  # fmt: skip
        Chunk.objects.create(
            workspace=workspace, document=document, ordinal=0, text=text, char_start=0,
            char_end=len(text), token_count=len(text.split()), content_hash=_sha(text),
        )  # fmt: skip
        document.workspace = workspace
        windows = document_windows(document)
        found = doc_names(text, list(names.items()))
        runs = {}
        for window in windows:
            entities = [
                {"name": n.name, "type": n.type_name, "spans": [list(p) for p in n.places]}
                for n in found
                if n.places
            ]
            runs[window.hash] = ExtractionRun.objects.create(
                workspace=workspace, window_hash=window.hash, prompt_version="t", model="t",
                schema_hash="t", extractor="llm", result={"entities": entities, "relations": []},
            )  # fmt: skip
        Materializer(
            documents=[document],
            windows_by_doc={document.pk: windows},
            refresh_hashes=set(),
            only_known=False,
        ).write_ready(EnsuredRuns(runs=runs), final=True)
        return document

    return materialise


def entity_of(surface: str) -> Entity:
    mention = Mention.objects.filter(surface_form=surface).select_related("entity").first()
    assert mention is not None, surface
    return mention.entity


def test_a_short_form_becomes_an_alias_of_the_full_name_s_entity(alice, write):
    write(
        "Kestrel Navigation System (KNS) launched. Jonas Lindqvist said the KNS is ready. "
        "Kestrel works, Lindqvist said.",
        {
            "Kestrel Navigation System": "product",
            "KNS": "product",
            "Kestrel": "product",
            "Jonas Lindqvist": "person",
            "Lindqvist": "person",
        },
    )
    kns, jonas = entity_of("Kestrel Navigation System"), entity_of("Jonas Lindqvist")
    assert entity_of("KNS") == entity_of("Kestrel") == kns
    assert entity_of("Lindqvist") == jonas
    assert Entity.objects.filter(workspace=alice.workspace).count() == 2
    aliases = {(a.name, a.entity_id, a.origin) for a in Alias.objects.all()}
    assert aliases == {
        ("KNS", kns.pk, AliasOrigin.AUTO),
        ("Kestrel", kns.pk, AliasOrigin.AUTO),
        ("Lindqvist", jonas.pk, AliasOrigin.AUTO),
    }
    kns.refresh_from_db()
    assert kns.aliases == ["KNS", "Kestrel"]
    event = CurationEvent.objects.filter(entity=kns).first()
    assert event is not None
    assert event.actor is None and event.payload["automatic"] is True
    assert "short form" in event.summary
    # A later document's bare short form finds the entity through the alias.
    write("Kestrel ships in May.", {"Kestrel": "product"}, path="b.txt")
    assert Mention.objects.filter(entity=kns, surface_form="Kestrel").count() == 2
    # And search finds the entity by it.
    assert [e.name for e in search_entities(alice.workspace, q="kns")] == [kns.name]


def test_a_short_form_s_alias_is_logged_with_its_rule(alice, write):
    names = {"Jonas Lindqvist": "person", "Lindqvist": "person"}
    write("Jonas Lindqvist spoke. Lindqvist agreed.", names)
    event = CurationEvent.objects.get(action="alias_add")
    assert event.payload["rule"] == "short_form"
    assert event.payload["automatic"] is True


def test_an_ambiguous_short_form_goes_to_the_review_queue(alice, write):
    write(
        "Helios Robotics Inc. raised money from Helios Capital. Helios will hire.",
        {
            "Helios Robotics Inc.": "organization",
            "Helios Capital": "organization",
            "Helios": "organization",
        },
    )
    helios = entity_of("Helios")
    assert helios.name == "Helios"
    assert not Alias.objects.exists()
    pairs = {
        frozenset((s.entity_a.name, s.entity_b.name))
        for s in MergeSuggestion.objects.select_related("entity_a", "entity_b")
    }
    assert {
        frozenset(("Helios", "Helios Robotics Inc.")),
        frozenset(("Helios", "Helios Capital")),
    } <= pairs
    reasons = {r for s in MergeSuggestion.objects.all() for r in s.reasons}
    assert any("short form" in r for r in reasons)


def test_system_and_other_types_stay_apart(alice, write):
    write(
        "Kestrel Dynamics Ltd built the Kestrel Navigation System. The System works. "
        "Kestrel hired 40 people.",
        {
            "Kestrel Dynamics Ltd": "organization",
            "Kestrel Navigation System": "product",
            "System": "product",
            "Kestrel": "organization",
        },
    )
    assert entity_of("System").name == "System"
    assert entity_of("Kestrel") == entity_of("Kestrel Dynamics Ltd")
    assert entity_of("Kestrel") != entity_of("Kestrel Navigation System")
    assert {a.name for a in Alias.objects.all()} == {"Kestrel"}


def test_a_name_another_entity_answers_to_is_not_taken_but_asked_about(alice, write):
    write("Helios sells robots.", {"Helios": "organization"}, path="first.txt")
    first = entity_of("Helios")
    write(
        "Helios Capital invests. Helios backed Corvid Labs.",
        {"Helios Capital": "organization", "Helios": "organization", "Corvid Labs": "organization"},
        path="second.txt",
    )
    capital = Entity.objects.get(name="Helios Capital")
    # In the second document "Helios" is Helios Capital; the first one's stays as it was.
    second = Mention.objects.filter(surface_form="Helios", chunk__document__path="second.txt")
    assert {m.entity_id for m in second} == {capital.pk}
    assert (
        Mention.objects.get(surface_form="Helios", chunk__document__path="first.txt").entity
        == first
    )
    assert not Alias.objects.filter(entity=capital).exists()
    assert MergeSuggestion.objects.filter(
        entity_a_id=min(first.pk, capital.pk), entity_b_id=max(first.pk, capital.pk)
    ).exists()
