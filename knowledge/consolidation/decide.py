"""Match decisions: which of its candidates an extracted name is, by which rule, and what
that comes to under the type's thresholds (an automatic merge, a question for review, or
nothing). The rules live here, in one place, so that "why did X merge into Y" has one
answer: the rule's name, carried by the `Decision` into the curation history.

Pure: the candidates are entity-like values (`Candidate`: `knowledge.models.Entity` is one,
a test's plain object another), and the two facts of the workspace a rule may need are
asked of an `Evidence` port (knowledge/selectors/match_evidence.py answers it from the
database; a test answers it itself). Each fact is asked only when a rule needs it, so a
name decided by its letters costs no query. No database, no models: an import contract
(pyproject.toml) keeps it so.

The rules, for one name against the candidates sharing a blocking key:

- `qualified_name`: a code name and its qualified form ("SkipTest" / "unittest.SkipTest"),
  unless the shorter form ends another qualified name too, or is a module's own member;
- `similarity` / `acronym`: otherwise the best `name_similarity` among the pre-ranked
  candidates (an acronym when the name is written as the other's);
- `acronym_ambiguous`: an acronym that reads as another name here too is asked about;
- `acronym_unattested`: a short acronym and a phrase never seen together are asked about.

Then `outcome` applies the type's thresholds; an `embedding` decision (the nearest name
vector) is a reason to ask, never to merge.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple, Protocol

from rapidfuzz import fuzz, process

from knowledge.consolidation.keys import entity_key, suffixes
from knowledge.consolidation.names.acronyms import acronym_expansion
from knowledge.consolidation.names.code_names import (
    QUALIFIED_REASON,
    QUALIFIED_SCORE,
    repeats_its_module,
    shorter_form,
)
from knowledge.consolidation.names.normalise import canonical_key
from knowledge.consolidation.names.similarity import (
    ACRONYM_REASON,
    UNSURE_SCORE,
    Similarity,
    name_similarity,
)
from knowledge.consolidation.names.thresholds import Thresholds


class Rule(StrEnum):
    """The rule that decided a match, as the curation history records it (`"rule"` in an
    automatic merge's or alias's payload)."""

    QUALIFIED_NAME = "qualified_name"
    SIMILARITY = "similarity"
    ACRONYM = "acronym"
    ACRONYM_AMBIGUOUS = "acronym_ambiguous"
    ACRONYM_UNATTESTED = "acronym_unattested"
    EMBEDDING = "embedding"
    # Rules of the other tiers, which decide without a score:
    SAME_KEY = "same_key"  # consolidation: a re-keyed entity meets its twin
    UNTYPED_TWIN = "untyped_twin"  # the fallback type joins a name spelled alike
    SHORT_FORM = "short_form"  # a document's short name for its full name
    LLM_REVIEW = "llm_review"  # the LLM reviewer said "same"
    MANUAL = "manual"  # a person merged


class Candidate(Protocol):
    """What the rules read of an entity (`knowledge.models.Entity` has it all)."""

    @property
    def name(self) -> str: ...

    @property
    def canonical_name(self) -> str: ...

    @property
    def aliases(self) -> Sequence[str] | None: ...

    @property
    def blocking_keys(self) -> Sequence[str]: ...


class Evidence(Protocol):
    """The two facts of the workspace the rules cannot read from names."""

    def seen_together(self, acronym: str, phrase: str) -> bool:
        """Whether a passage holds the acronym and the phrase, each as words of their own."""
        ...

    def has_members(self, name: str) -> bool:
        """Whether the dotted code name has members of its own ("datetime.date.today" for
        "datetime.date"), as entities or in the passages."""
        ...


class Decision[E](NamedTuple):
    """The candidate a name is, how alike the two are (and why), and the rule that said so.
    A tuple, so `target, similarity, rule = decision` reads it whole."""

    target: E
    similarity: Similarity
    rule: str

    @property
    def reason(self) -> str:
        return "; ".join(self.similarity.reasons)


class Outcome(StrEnum):
    MERGE = "merge"
    REVIEW = "review"
    NONE = "none"


def outcome[E](decision: Decision[E] | None, limits: Thresholds) -> Outcome:
    """What a decision comes to under the type's thresholds: a merge at or above
    `auto_merge`, a question in the review band, nothing below. A close embedding alone is
    a reason to ask, never to merge (it was close enough to be found at all, whatever its
    band). Whether a person kept the pair apart is the caller's question, asked after this."""
    if decision is None:
        return Outcome.NONE
    by_embedding = decision.rule == Rule.EMBEDDING
    if not by_embedding and decision.similarity.score < limits.review:
        return Outcome.NONE
    if decision.similarity.score >= limits.auto_merge and not by_embedding:
        return Outcome.MERGE
    return Outcome.REVIEW


# Candidates scored in full after the quick pre-ranking (rapidfuzz, in C).
FULL_SCORING = 6


def best_match[E: Candidate](
    name: str, type_name: str, keys: list[str], candidates: Sequence[E], evidence: Evidence
) -> Decision[E] | None:
    """The candidate a name of the type is, if any, and by which rule: the name's blocking
    `keys` and the active entities of the type that share one (`candidates`)."""
    return unless_unattested(
        name, type_name, best_of(name, type_name, keys, candidates, evidence), evidence
    )


def best_of[E: Candidate](
    name: str, type_name: str, keys: list[str], candidates: Sequence[E], evidence: Evidence
) -> Decision[E] | None:
    """A qualified name's one candidate (`qualified`), else the most similar of the few
    candidates a quick token-set ratio on their canonical keys picks (acronym candidates
    always get the full similarity), so the cost per name stays small however many share a
    common word."""
    if not keys or not candidates:
        return None
    found = qualified(name, candidates, evidence)
    if found is not None:
        return found
    key = entity_key(name, type_name)
    acronyms = {k for k in keys if k.startswith("a:")}
    ranked = process.extract(
        key,
        {i: c.canonical_name for i, c in enumerate(candidates)},
        scorer=fuzz.token_set_ratio,
        limit=FULL_SCORING,
    )
    chosen = {index for _, _, index in ranked} | {
        i for i, c in enumerate(candidates) if acronyms & set(c.blocking_keys)
    }
    best: Decision[E] | None = None
    readings = 0  # candidates the name is an acronym or an expansion of
    for index in sorted(chosen):
        candidate = candidates[index]
        score = name_similarity(
            name, candidate.name, suffixes=suffixes(type_name), entity_type=type_name
        )
        acronym = score.reasons[:1] == (ACRONYM_REASON,)
        readings += acronym
        if best is None or score.score > best.similarity.score:
            best = Decision(candidate, score, Rule.ACRONYM if acronym else Rule.SIMILARITY)
    return unless_ambiguous(name, best, readings)


def qualified[E: Candidate](
    name: str, candidates: Sequence[E], evidence: Evidence
) -> Decision[E] | None:
    """The one candidate that is the name qualified or its shorter form (see
    `shorter_form`), unless the shorter form ends another qualified name too: another
    candidate, or a name the candidate took before ("Handler_x" took "a.Handler_x", then
    meets "b.Handler_x"), or it is a module's own member (`module_member`). Then nothing:
    the other rules decide."""
    hits = [(c, short) for c in candidates if (short := shorter_form(name, c.name))]
    if len(hits) != 1:
        return None
    entity, short = hits[0]
    written = [name, *(c.name for c in candidates), *(entity.aliases or [])]
    longer = {n for n in written if shorter_form(short, n) == short}
    if len({n.removesuffix("()") for n in longer}) > 1:
        return None
    if module_member(short, name, entity.name, evidence):
        return None
    return Decision(entity, Similarity(QUALIFIED_SCORE, (QUALIFIED_REASON,)), Rule.QUALIFIED_NAME)


def module_member(short: str, a: str, b: str, evidence: Evidence) -> bool:
    """Whether `short`, the shorter of two code names `a` and `b`, is a member of a module in
    full rather than the longer written short, where the module and its class share a name
    (`repeats_its_module`): so when `short` has members of its own in the workspace. On the
    Python manual the class `datetime.date` (with `datetime.date.today` and others) had
    taken the method `datetime.datetime.date`, `datetime.time` and `datetime.tzinfo`
    likewise, while `socket.recv` (no members) is rightly the method `socket.socket.recv`."""
    if not repeats_its_module(a, b):
        return False
    return evidence.has_members(short)


def unless_ambiguous[E: Candidate](
    name: str, best: Decision[E] | None, readings: int
) -> Decision[E] | None:
    """An acronym match, asked about rather than merged when the acronym reads as another
    name too: another candidate ("CR" / "CertificateRequest" and "CoverageResults"), or a
    name the acronym's entity absorbed before ("BS" took "Buffer structure", then "Bounded
    Semaphore", "Buffered Streams" and three more on the Python manual: one entity)."""
    if best is None or best.similarity.reasons[:1] != (ACRONYM_REASON,):
        return best
    entity, similarity, _ = best
    if similarity.score <= UNSURE_SCORE:
        return best
    acronym, expansion = acronym_and_expansion(name, entity)
    key = canonical_key(expansion or name)
    absorbed = [
        alias
        for alias in [entity.name, *(entity.aliases or [])]
        if acronym_expansion(acronym, alias) == alias and canonical_key(alias) != key
    ]
    if readings < 2 and not absorbed:
        return best
    why = f"{acronym} reads as {readings + len(absorbed)} names here"
    return Decision(entity, Similarity(UNSURE_SCORE, (ACRONYM_REASON, why)), Rule.ACRONYM_AMBIGUOUS)


def acronym_and_expansion(name: str, entity: Candidate) -> tuple[str, str | None]:
    """Of a name and its acronym match: which one is the acronym, and the other (None when
    neither spells the other)."""
    expansion = acronym_expansion(name, entity.name)
    return (entity.name if expansion == name else name), expansion


# An acronym of this many letters or fewer spells too many phrases to be read as one by its
# letters alone: two for an organisation, whose initials are made to be its name ("IBM"),
# three for the other types, whose phrases are descriptions ("CSS" / "Compute the Standard
# Score").
SHORT_ACRONYM = 2
SHORT_DESCRIPTIVE_ACRONYM = 3
ACRONYM_NAMED_TYPES = frozenset({"organization"})


def unless_unattested[E: Candidate](
    name: str, type_name: str, best: Decision[E] | None, evidence: Evidence
) -> Decision[E] | None:
    """A short acronym (SHORT_ACRONYM, SHORT_DESCRIPTIVE_ACRONYM) merged with a phrase only
    when some passage of the workspace has both: on the Python manual "HT" (curses.ascii's
    "Horizontal tab") had joined "heap types", "FF" "File Formats", "SO" "SequenceMatcher
    Objects" — 12 of the 13 two-letter merges were wrong, and the right one ("LF" / "Line
    Feed") is in one table row; of the ten three-letter ones, "CSS" had joined "Compute the
    Standard Score", "SSL" "SuSE Linux" and "AT&T" "ActiveState Tcl/Tk", none of them in a
    passage together, while "GIL", "FTP", "MRO" and four more are. Else it is a question
    for review. Longer acronyms, and an organisation's of three letters ("IBM"), still
    merge by their letters."""
    if best is None or best.similarity.reasons != (ACRONYM_REASON,):
        return best
    entity = best.target
    acronym, expansion = acronym_and_expansion(name, entity)
    short = SHORT_ACRONYM if type_name in ACRONYM_NAMED_TYPES else SHORT_DESCRIPTIVE_ACRONYM
    if expansion is None or sum(c.isalnum() for c in acronym) > short:
        return best
    if evidence.seen_together(acronym, expansion):
        return best
    why = f"{acronym} and {expansion} never appear together"
    return Decision(
        entity, Similarity(UNSURE_SCORE, (ACRONYM_REASON, why)), Rule.ACRONYM_UNATTESTED
    )
