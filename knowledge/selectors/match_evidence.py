"""The evidence the match rules ask the workspace for (`decide.Evidence`, answered from the
database): whether a passage holds an acronym and its phrase together, and whether a dotted
code name has members of its own. The two passage checks read the chunks' text and
full-text index (ingest's table; knowledge may read ingest, never the reverse).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection

from knowledge.models import Entity, EntityState
from workspaces.models import Workspace


@dataclass(frozen=True, slots=True)
class WorkspaceEvidence:
    """The evidence port of knowledge/consolidation/decide.py for one workspace. Each
    question is one query, asked only when a rule needs its answer."""

    workspace: Workspace

    def seen_together(self, acronym: str, phrase: str) -> bool:
        return passage_has_both(self.workspace, acronym, phrase)

    def has_members(self, name: str) -> bool:
        """Members as entities first (a page's members are often extracted after the page
        named the class's attribute), then in the passages."""
        return Entity.objects.filter(
            workspace=self.workspace, state=EntityState.ACTIVE, name__startswith=f"{name}."
        ).exists() or passage_names_member(self.workspace, name)


def passage_has_both(workspace: Workspace, acronym: str, phrase: str) -> bool:
    """Whether a passage of the workspace (not boilerplate) holds the phrase and the
    acronym as written, each as words of their own ("SO" in "SO_REUSEADDR" is none): entity
    resolution asks it before reading two letters as a phrase. The chunks' full-text index
    finds the passages with the phrase's words; the text itself then must hold the phrase
    in order, its small words too ("OR Patterns" is not any passage with "patterns")."""
    words = _WORDS.findall(phrase)
    if not words:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM ingest_chunk WHERE workspace_id = %s "
            "AND NOT boilerplate AND search_vector @@ plainto_tsquery('english', %s) "
            "AND text ~* %s AND text ~ %s)",
            [
                workspace.pk,
                phrase,
                _as_words("[^[:alnum:]]+".join(re.escape(word) for word in words)),
                _as_words(re.escape(acronym)),
            ],
        )
        return bool(cursor.fetchone()[0])


_WORDS = re.compile(r"[^\W_]+")


def passage_names_member(workspace: Workspace, name: str) -> bool:
    """Whether a passage of the workspace (not boilerplate) names a member of the dotted code
    name `name` ("datetime.tzinfo.utcoffset" for "datetime.tzinfo"): entity resolution asks
    it before reading a module's member as its same-named class's member written short.
    PostgreSQL's parser reads a dotted name as one token (its "host" kind), so a prefix
    query on the chunks' full-text index finds the members without reading any text."""
    prefix = name.strip().removesuffix("()").casefold()
    if not _DOTTED.fullmatch(prefix):
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM ingest_chunk WHERE workspace_id = %s "
            "AND NOT boilerplate AND search_vector @@ (quote_literal(%s) || ':*')::tsquery)",
            [workspace.pk, f"{prefix}."],
        )
        return bool(cursor.fetchone()[0])


_DOTTED = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+")


def _as_words(pattern: str) -> str:
    """A PostgreSQL pattern matching `pattern` with no letter, digit or underscore on
    either side."""
    return f"(^|[^[:alnum:]_])({pattern})([^[:alnum:]_]|$)"
