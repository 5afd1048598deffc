"""Thresholds: per entity type, the score from which a pair is merged automatically and the
band below it that goes to a person for review, tuned on the labelled pairs of
tests/fixtures/entity_pairs.jsonl (bench/consolidation_quality.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Thresholds:
    """Scores at or above `auto_merge` merge; scores in [review, auto_merge) are queued for
    a person; anything lower stays apart.

    How the values were chosen: `name_similarity` gives a few characteristic levels (1.0
    same key, 0.95 same letters or same words, 0.93 acronym, 0.9 typo, about 0.85 the same
    words in another order, 0.75..0.85 extra words in front or initials, at most 0.7 extra
    words after, 0.5 and below different words or numbers), so each type's thresholds are
    at one of those levels, picked with bench/consolidation_quality.py on the labelled pairs
    of tests/fixtures/entity_pairs.jsonl (precision of automatic merges first, then recall)
    and kept on a plateau: moving a threshold to the next level changes the decision for a
    whole kind of pair, not for a single labelled example.

    - auto_merge 0.9 (default, organization, location, concept, work): typos and acronyms
      merge. Going down to 0.85 also merges reordered names ("University of Washington" /
      "Washington University" are two universities) and extra words in front ("AI ethics" /
      "ethics"); going up to 0.93 loses every typo.
    - person 0.95: stricter. A one-letter difference is often another person ("Andersen" /
      "Anderson"), initials and surnames alone ("Einstein", "J. Smith") are for a person to
      confirm, so only spelling variants (accents, case, honorifics, "Smith, John") merge.
    - technology 0.93: acronyms merge ("JS", "LLM", "CNN"), typos do not: one letter is
      another technology more often than a slip ("OpenGL" / "OpenCL").
    - product 0.75: a maker's name in front is noise ("Adobe Photoshop" / "Photoshop",
      "Samsung Galaxy S23"), while variants (Pro, Max, numbers, words after) score 0.7 or
      less.
    - event 0.85: also merges the same words in another order ("Second World War" / "World
      War II", "financial crisis of 2008") and an organiser inserted ("2022 FIFA World Cup"
      / "World Cup 2022"); "Hurricane Katrina" / "Katrina" is still reviewed.
    - review 0.75 keeps the queue to extra words in front, initials and typos;
      organization (0.65) also queues a short name with words after it ("Harvard" /
      "Harvard University", "Toyota Motor Corporation" / "Toyota"), event (0.7) "Watergate" /
      "Watergate scandal", product (0.7) its variants with words after; concept (0.8)
      queues no single word against a longer phrase holding it: a concept's extra words
      make another concept ("Functions" / "Special functions", "Statements" / "Assignment
      statements": 832 of the 1,079 concept pairs open on the Python manual, all 40 of a
      sample two things; on the labelled pairs it drops one wrong pair from the queue),
      nor, with NARROWER_TYPES, a phrase against a longer one ("Structure" / "Data
      Structures": 222 more open pairs, 19 of the 20 concept pairs of a sample of 25 two
      things).
    """

    auto_merge: float
    review: float


DEFAULT_THRESHOLDS = Thresholds(auto_merge=0.9, review=0.75)
TYPE_THRESHOLDS: dict[str, Thresholds] = {
    "person": Thresholds(auto_merge=0.95, review=0.75),
    "organization": Thresholds(auto_merge=0.9, review=0.65),
    "location": Thresholds(auto_merge=0.9, review=0.75),
    "product": Thresholds(auto_merge=0.75, review=0.7),
    "technology": Thresholds(auto_merge=0.93, review=0.75),
    "concept": Thresholds(auto_merge=0.9, review=0.8),
    "event": Thresholds(auto_merge=0.85, review=0.7),
    "work": Thresholds(auto_merge=0.9, review=0.75),
}


def thresholds_for(entity_type: str) -> Thresholds:
    """The thresholds of a type; types without their own (custom ones) get the default."""
    return TYPE_THRESHOLDS.get(entity_type, DEFAULT_THRESHOLDS)
