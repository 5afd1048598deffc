"""What entity search looks names up in: the words of every entity's name and aliases, and
the one-typo keys of those words.

Both tables are kept by PostgreSQL itself (triggers on knowledge_entity and
knowledge_alias, migration 0014), so every write path — extraction, curation, merges,
bulk loads, raw SQL — keeps them current; nothing in Python writes them. A word is what
`knowledge_name_words()` makes of a name: NFKC, lower case, accents and apostrophes
removed, split at anything not a letter or digit, words of 2+ characters. Entity search
(knowledge/selectors/entities.py) asks the same function for the words of the query, so
both sides always agree.

One typo (SymSpell's deletion neighbourhood): every word of 4 to 32 characters is stored
under itself and under each of its single-character deletions ("lindqvist" under
"indqvist", "lndqvist", ..., "lindqvis"). Two words within one insertion, deletion,
substitution or swap of each other share a key, so the query word's own keys find them in
one index lookup; the few candidates are then checked exactly (rapidfuzz). Keys belong to
the word, not to an entity: a workspace's vocabulary is much smaller than its names, and a
word no entity uses any more just finds nothing.
"""

from __future__ import annotations

from django.db import models

from workspaces.models import WorkspaceScopedModel

# The longest word stored (longer ones are cut), and the length range with typo keys.
MAX_WORD = 100
TYPO_MIN_LENGTH = 4
TYPO_MAX_LENGTH = 32


class EntityWord(WorkspaceScopedModel):
    """A word of an entity's name or of one of its aliases (once per entity)."""

    # Not a foreign key: the trigger that deletes an entity deletes its words (after its
    # aliases, whose own triggers rewrite the entity's words on the way), so the ORM has
    # nothing to collect when entities are deleted.
    entity_id = models.BigIntegerField()
    word = models.CharField(max_length=MAX_WORD)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity_id", "word"], name="entityword_unique")
        ]
        indexes = [
            # Word-prefix search: a range scan of one workspace's words, entity ids from the
            # index alone.
            models.Index(
                fields=["workspace", "word"], include=["entity_id"], name="entityword_ws_word"
            )
        ]

    def __str__(self) -> str:
        return self.word


class WordTypoKey(WorkspaceScopedModel):
    """A word of the workspace's names under one of its one-typo keys (itself included)."""

    key = models.CharField(max_length=MAX_WORD)
    word = models.CharField(max_length=MAX_WORD)

    class Meta:
        constraints = [
            # Also the lookup index: (workspace, key) -> words.
            models.UniqueConstraint(fields=["workspace", "key", "word"], name="wordtypokey_unique")
        ]

    def __str__(self) -> str:
        return f"{self.key} -> {self.word}"
