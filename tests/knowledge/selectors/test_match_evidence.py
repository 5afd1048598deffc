"""The evidence the match rules ask the workspace for (knowledge/selectors/match_evidence.py):
the two passage checks, moved here from ingest's reads, and the port that answers
knowledge/consolidation/decide.py from the database."""

from __future__ import annotations

import hashlib

import pytest

from ingest.models import Chunk, Document, DocumentStatus, Source, SourceKind, SourceStatus
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.consolidation.keys import entity_key
from knowledge.models import Entity, EntityType
from knowledge.selectors.match_evidence import (
    WorkspaceEvidence,
    passage_has_both,
    passage_names_member,
)


@pytest.fixture
def passage(alice):
    """A chunk of a document in alice's workspace holding `text`."""
    source = Source.objects.create(
        workspace=alice.workspace, kind=SourceKind.TEXT, name="notes", status=SourceStatus.DONE
    )

    def write(text: str, *, boilerplate: bool = False) -> Chunk:
        digest = hashlib.sha256(text.encode()).hexdigest()
        document = Document.objects.create(
            workspace=alice.workspace, source=source, path=f"{digest[:8]}.txt", text=text,
            status=DocumentStatus.DONE, content_hash=digest,
        )  # fmt: skip
        return Chunk.objects.create(
            workspace=alice.workspace, document=document, ordinal=0, text=text, char_start=0,
            char_end=len(text), token_count=len(text.split()), content_hash=digest,
            boilerplate=boilerplate,
        )  # fmt: skip

    return write


def test_an_acronym_and_its_phrase_are_seen_together_only_as_words_of_their_own(alice, passage):
    workspace = alice.workspace
    passage("The global interpreter lock (GIL) lets one thread run Python code at a time.")
    passage("Set SO_REUSEADDR first. SequenceMatcher Objects compare sequences.")
    assert passage_has_both(workspace, "GIL", "Global Interpreter Lock")
    assert not passage_has_both(workspace, "SO", "SequenceMatcher Objects")
    assert not passage_has_both(workspace, "gil", "Global Interpreter Lock")  # as written
    assert not passage_has_both(workspace, "GIL", "")


def test_a_boilerplate_passage_is_no_evidence(alice, passage):
    passage("Line Feed (LF) ends a line.", boilerplate=True)
    passage("datetime.tzinfo.utcoffset() returns the offset.", boilerplate=True)
    assert not passage_has_both(alice.workspace, "LF", "Line Feed")
    assert not passage_names_member(alice.workspace, "datetime.tzinfo")


def test_a_passage_naming_a_member_of_a_dotted_name(alice, passage):
    workspace = alice.workspace
    passage("Call datetime.tzinfo.utcoffset() to get the offset.")
    assert passage_names_member(workspace, "datetime.tzinfo")
    assert passage_names_member(workspace, "datetime.tzinfo()")
    assert not passage_names_member(workspace, "datetime.date")
    assert not passage_names_member(workspace, "tzinfo")  # not dotted: no prefix to ask


def test_the_port_answers_members_from_entities_or_passages(alice, bob, passage):
    workspace = alice.workspace
    do_ensure_default_schema(workspace=workspace)
    technology = EntityType.objects.get(workspace=workspace, name="technology")
    Entity.objects.create(
        workspace=workspace, name="datetime.date.today", type=technology,
        canonical_name=entity_key("datetime.date.today", "technology"),
    )  # fmt: skip
    passage("socket.socket.recv() reads data. The GIL (Global Interpreter Lock) is held.")
    evidence = WorkspaceEvidence(workspace)
    assert evidence.has_members("datetime.date")  # an entity
    assert evidence.has_members("socket.socket")  # a passage
    assert not evidence.has_members("socket.recv")
    assert evidence.seen_together("GIL", "Global Interpreter Lock")
    elsewhere = WorkspaceEvidence(bob.workspace)
    assert not elsewhere.has_members("datetime.date")
    assert not elsewhere.seen_together("GIL", "Global Interpreter Lock")
