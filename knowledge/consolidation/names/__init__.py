"""Name matching for entity consolidation: canonical keys, blocking keys and a similarity score.

Extraction writes the names it finds as they were written: "Apple Inc.", "Apple", "APPLE";
"IBM" and "International Business Machines"; "Zürich" and "Zurich"; "Microsft". Exact
matching on `knowledge.canonical.canonical_name` keeps those apart, which clutters the graph,
while merging too eagerly ("Java" into "JavaScript", "iPhone 14" into "iPhone 15") corrupts
it, and a wrong merge is worse than a missed one. This package is the pure, deterministic
part of consolidation, with no Django and no database, so it is cheap to test and to
benchmark (bench/consolidation_quality.py, against tests/fixtures/entity_pairs.jsonl). One
module per rule family:

- `normalise`: `canonical_key`, a more aggressive normal form than `canonical_name`
  (accents, `&`, most punctuation, leading articles, corporate suffixes, simple plurals).
  Equal keys mean "the same name written differently". Also `same_spelling`.
- `acronyms`: a name's initials, whether a name looks like an acronym, which of two names
  is the other's expansion.
- `code_names`: dotted paths and identifiers ("pickle" / "pickle.Pickler", "SkipTest" /
  "unittest.SkipTest").
- `blocking`: `blocking_keys`, a handful of strings per name, stored in an array column with
  a GIN index, so that candidate pairs are found with one `&&` query instead of comparing
  every name with every other.
- `similarity`: `name_similarity`, a score in 0..1 with human-readable reasons for a
  candidate pair, bounded by what `alignment` (the words matched one to one) and `bounds`
  (what the words and numbers left over allow) say.
- `thresholds`: `Thresholds` / `TYPE_THRESHOLDS`, per entity type, the score from which a
  pair is merged automatically and the band below it that goes to a person for review.
- `words`: the small words all of them read names with.

Corporate suffixes only mean something for organisations ("Lie group" is not the
mathematician Lie), so callers pass `suffixes=suffixes_for_type(entity_type)`; the plain
default strips them, which is also what blocking wants (it only finds candidates).

Names with a leading underscore are shared between the package's modules; the few that
knowledge/consolidation/short_forms.py reads are re-exported here, as before the split.
"""

from __future__ import annotations

from knowledge.consolidation.names.acronyms import _acronym_match as _acronym_match
from knowledge.consolidation.names.acronyms import (
    acronym_expansion,
    acronym_of,
    looks_like_acronym,
)
from knowledge.consolidation.names.blocking import _GENERIC as _GENERIC
from knowledge.consolidation.names.blocking import MAX_BLOCKING_KEYS, blocking_keys
from knowledge.consolidation.names.bounds import _QUALIFIERS as _QUALIFIERS
from knowledge.consolidation.names.bounds import NARROWER_TYPES as NARROWER_TYPES
from knowledge.consolidation.names.bounds import Bounds as Bounds
from knowledge.consolidation.names.code_names import (
    QUALIFIED_REASON,
    QUALIFIED_SCORE,
    code_paths_differ,
    shorter_form,
)
from knowledge.consolidation.names.code_names import _is_identifier as _is_identifier
from knowledge.consolidation.names.code_names import repeats_its_module as repeats_its_module
from knowledge.consolidation.names.normalise import (
    DEFAULT_CORPORATE_SUFFIXES,
    canonical_key,
    same_spelling,
    suffixes_for_type,
)
from knowledge.consolidation.names.normalise import _key_tokens as _key_tokens
from knowledge.consolidation.names.normalise import _number_value as _number_value
from knowledge.consolidation.names.normalise import _singular as _singular
from knowledge.consolidation.names.normalise import _Token as _Token
from knowledge.consolidation.names.similarity import (
    ACRONYM_REASON,
    UNSURE_SCORE,
    Similarity,
    name_similarity,
)
from knowledge.consolidation.names.similarity import ACRONYM_SCORE as ACRONYM_SCORE
from knowledge.consolidation.names.similarity import ADDRESS_NAMED_TYPES as ADDRESS_NAMED_TYPES
from knowledge.consolidation.names.similarity import ADDRESS_REASON as ADDRESS_REASON
from knowledge.consolidation.names.similarity import LOOSE_REASON as LOOSE_REASON
from knowledge.consolidation.names.thresholds import (
    DEFAULT_THRESHOLDS,
    TYPE_THRESHOLDS,
    Thresholds,
    thresholds_for,
)
from knowledge.consolidation.names.words import _FILLER as _FILLER
from knowledge.consolidation.names.words import _words as _words

__all__ = [
    "ACRONYM_REASON",
    "DEFAULT_CORPORATE_SUFFIXES",
    "DEFAULT_THRESHOLDS",
    "MAX_BLOCKING_KEYS",
    "QUALIFIED_REASON",
    "QUALIFIED_SCORE",
    "TYPE_THRESHOLDS",
    "UNSURE_SCORE",
    "Similarity",
    "Thresholds",
    "acronym_expansion",
    "acronym_of",
    "blocking_keys",
    "canonical_key",
    "code_paths_differ",
    "looks_like_acronym",
    "name_similarity",
    "same_spelling",
    "shorter_form",
    "suffixes_for_type",
    "thresholds_for",
]
