"""The match decisions (knowledge/consolidation/decide.py) without a database: candidates are
plain values and the workspace's evidence is a fake of the port, which answers from what
each test says the passages hold and records what it was asked. For each rule family a
case that merges and a near miss that does not, each decision naming its rule."""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge.consolidation.decide import (
    Decision,
    Outcome,
    Rule,
    best_match,
    outcome,
)
from knowledge.consolidation.keys import entity_blocking_keys, entity_key, thresholds
from knowledge.consolidation.names.similarity import Similarity


@dataclass(frozen=True)
class Named:
    """An entity as the rules read it: no model, no database."""

    name: str
    canonical_name: str
    aliases: list[str] = field(default_factory=list)
    blocking_keys: list[str] = field(default_factory=list)


def named(name: str, type_name: str, *, aliases: tuple[str, ...] = ()) -> Named:
    return Named(
        name, entity_key(name, type_name), list(aliases), entity_blocking_keys(name, type_name)
    )


class Passages:
    """The evidence port, answered from what the test says the workspace holds."""

    def __init__(
        self,
        together: tuple[tuple[str, str], ...] = (),
        with_members: tuple[str, ...] = (),
    ) -> None:
        self.together = set(together)
        self.with_members = set(with_members)
        self.asked: list[tuple[str, ...]] = []

    def seen_together(self, acronym: str, phrase: str) -> bool:
        self.asked.append(("seen_together", acronym, phrase))
        return (acronym, phrase) in self.together

    def has_members(self, name: str) -> bool:
        self.asked.append(("has_members", name))
        return name in self.with_members


def decide(
    name: str, type_name: str, *candidates: str | Named, evidence: Passages | None = None
) -> Decision[Named] | None:
    found = [c if isinstance(c, Named) else named(c, type_name) for c in candidates]
    keys = entity_blocking_keys(name, type_name)
    return best_match(name, type_name, keys, found, evidence or Passages())


def comes_to(decision: Decision[Named] | None, type_name: str) -> Outcome:
    return outcome(decision, thresholds(type_name))


# --- similarity: the letters of the names ----------------------------------------------------


def test_a_typo_of_an_organisation_s_name_merges_by_similarity():
    evidence = Passages()
    decision = decide("Microsft", "organization", "Microsoft", evidence=evidence)
    assert decision is not None
    assert (decision.target.name, decision.rule) == ("Microsoft", Rule.SIMILARITY)
    assert "typo" in decision.reason
    assert comes_to(decision, "organization") is Outcome.MERGE
    assert evidence.asked == []  # decided by the letters: no query


def test_a_typo_of_a_person_s_name_is_a_question_not_a_merge():
    decision = decide("Andersen", "person", "Anderson")
    assert decision is not None and decision.rule == Rule.SIMILARITY
    assert comes_to(decision, "person") is Outcome.REVIEW


def test_different_words_are_no_match():
    decision = decide("Austria", "location", "Australia")
    assert decision is not None and decision.rule == Rule.SIMILARITY
    assert comes_to(decision, "location") is Outcome.NONE
    assert decide("Austria", "location") is None  # no candidate, no decision


# --- acronyms: one reading merges, two are a question ----------------------------------------


def test_an_organisation_s_acronym_merges_by_its_letters_alone():
    evidence = Passages()
    decision = decide("IBM", "organization", "International Business Machines", evidence=evidence)
    assert decision is not None
    assert decision.rule == Rule.ACRONYM
    assert decision.similarity == Similarity(0.93, ("acronym",))
    assert comes_to(decision, "organization") is Outcome.MERGE
    assert evidence.asked == []  # three letters of an organisation need no passage


def test_an_acronym_with_two_expansions_among_the_candidates_is_a_question():
    decision = decide(
        "IBM", "organization", "International Business Machines", "Integrated Bio Materials"
    )
    assert decision is not None
    assert decision.rule == Rule.ACRONYM_AMBIGUOUS
    assert decision.similarity.reasons == ("acronym", "IBM reads as 2 names here")
    assert comes_to(decision, "organization") is Outcome.REVIEW


def test_an_acronym_its_entity_already_read_another_way_is_a_question():
    buffer = named("Buffer Structure", "concept", aliases=("Bounded Semaphore",))
    evidence = Passages()
    decision = decide("BS", "concept", buffer, evidence=evidence)
    assert decision is not None and decision.rule == Rule.ACRONYM_AMBIGUOUS
    assert comes_to(decision, "concept") is Outcome.REVIEW
    assert evidence.asked == []  # a question already: no passage can make it a merge


# --- acronyms: a short one needs a passage with both -----------------------------------------


def test_a_short_acronym_seen_with_its_phrase_merges():
    evidence = Passages(together=(("GIL", "Global Interpreter Lock"),))
    decision = decide("GIL", "technology", "Global Interpreter Lock", evidence=evidence)
    assert decision is not None and decision.rule == Rule.ACRONYM
    assert comes_to(decision, "technology") is Outcome.MERGE
    assert evidence.asked == [("seen_together", "GIL", "Global Interpreter Lock")]


def test_a_short_acronym_never_seen_with_its_phrase_is_a_question():
    evidence = Passages()
    decision = decide("HT", "concept", "Horizontal Tab", evidence=evidence)
    assert decision is not None
    assert decision.rule == Rule.ACRONYM_UNATTESTED
    assert decision.reason == "acronym; HT and Horizontal Tab never appear together"
    assert comes_to(decision, "concept") is Outcome.REVIEW
    assert evidence.asked == [("seen_together", "HT", "Horizontal Tab")]


# --- qualified code names ---------------------------------------------------------------------


def test_a_code_name_and_its_qualified_form_merge():
    decision = decide("SkipTest", "technology", "unittest.SkipTest")
    assert decision is not None
    assert (decision.target.name, decision.rule) == ("unittest.SkipTest", Rule.QUALIFIED_NAME)
    assert comes_to(decision, "technology") is Outcome.MERGE
    one = decide("Handler_x", "technology", "a.Handler_x")
    assert one is not None and one.rule == Rule.QUALIFIED_NAME


def test_a_shorter_form_that_ends_two_qualified_names_joins_neither():
    taken = named("a.Handler_x", "technology", aliases=("b.Handler_x",))
    decision = decide("Handler_x", "technology", taken)
    assert decision is None or decision.rule != Rule.QUALIFIED_NAME
    assert comes_to(decision, "technology") is Outcome.NONE
    two = decide("Handler_x", "technology", "a.Handler_x", "b.Handler_x")
    assert comes_to(two, "technology") is Outcome.NONE


def test_a_class_member_written_short_merges_when_the_short_name_has_no_members():
    evidence = Passages()
    decision = decide("socket.socket.recv", "technology", "socket.recv", evidence=evidence)
    assert decision is not None and decision.rule == Rule.QUALIFIED_NAME
    assert comes_to(decision, "technology") is Outcome.MERGE
    assert evidence.asked == [("has_members", "socket.recv")]


def test_a_module_member_with_members_of_its_own_does_not_take_the_class_member():
    evidence = Passages(with_members=("datetime.date",))
    decision = decide("datetime.datetime.date", "technology", "datetime.date", evidence=evidence)
    assert decision is None or decision.rule != Rule.QUALIFIED_NAME
    assert comes_to(decision, "technology") is Outcome.NONE
    assert evidence.asked == [("has_members", "datetime.date")]


# --- the name embedding: a reason to ask, never to merge --------------------------------------


def test_a_close_embedding_is_asked_about_where_the_same_score_by_spelling_merges():
    target = named("PostgreSQL", "technology")
    embedding = Decision(target, Similarity(0.99, ("embedding 0.99",)), Rule.EMBEDDING)
    spelling = Decision(target, Similarity(0.99, ("typo",)), Rule.SIMILARITY)
    assert comes_to(embedding, "technology") is Outcome.REVIEW
    assert comes_to(spelling, "technology") is Outcome.MERGE
    # Found close enough at all, an embedding is asked about below the spelling's band too.
    low = Decision(target, Similarity(0.5, ("embedding 0.50",)), Rule.EMBEDDING)
    assert comes_to(low, "technology") is Outcome.REVIEW
    assert comes_to(None, "technology") is Outcome.NONE
