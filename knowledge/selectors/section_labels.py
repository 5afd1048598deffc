"""Section labels a source repeats: the headings its documents share (a reference's NAME,
SYNOPSIS, DESCRIPTION, SEE ALSO; an API reference's "Method Summary", "Parameters",
"Returns"; "Notes", "Examples"), which are the documents' structure, not their subjects.

Learnt per source from the same kind of statistics as its boilerplate
(ingest/boilerplate.py): a heading text is a section label when it heads a section in at
least max(MIN_DOCUMENTS, MIN_SHARE of) the source's documents. No list of words: whatever
generator built the pages, the labels it puts on every page are found by counting, and a
heading that one page has (its own subject, or a name it documents) stays a heading that
may name an entity. Duplicates count once, like boilerplate; code blocks are no headings
(a "# comment" in an example).

A person can correct the answer per source (`SectionLabelOverride`): a learnt label that
is a subject after all, or a label the counts missed. `structure_label_keys` is what
extraction leaves out (knowledge/actions/extraction/materialize.py); `section_labels` is
what the quality page shows.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from django.db import connection

from ingest.models import Document, DocumentStatus, Source
from knowledge.canonical import canonical_name
from knowledge.models import SectionLabelOverride
from workspaces.models import Workspace

# The defaults of the boilerplate counts (ingest/boilerplate.py MIN_DOCUMENTS): three pages
# are a pattern, two may be a coincidence.
MIN_DOCUMENTS = 3
# In a large source a label must also be common: 2 % of 300 pages is 6, of 2,000 pages 40.
MIN_SHARE = 0.02
# A section label is short; longer repeated headings are titles (and bound what is read).
MAX_LABEL_CHARS = 80
# At most this many labels per source are learnt and shown, most common first.
MAX_LABELS = 300

# Markdown emphasis and code marks around a heading's text ("**NAME**", "`Returns`"), and
# the permalink glyphs some generators leave at its end.
_MARKS = re.compile(r"^[\s*_`#¶§]+|[\s*_`#¶§]+$")


def label_key(text: str) -> str:
    """What a heading and an extracted name are compared on: the canonical name
    (knowledge/canonical.py: case folded, spaces collapsed, edge punctuation dropped)
    without Markdown marks around it. "SEE ALSO", "See also" and "**See Also:**" agree."""
    return canonical_name(_MARKS.sub("", canonical_name(_MARKS.sub("", text))))[:200]


def document_threshold(documents: int) -> int:
    """How many of a source's `documents` a heading must head a section in to be a label."""
    return max(MIN_DOCUMENTS, math.ceil(MIN_SHARE * documents))


@dataclass(frozen=True, slots=True)
class SectionLabel:
    """One label of a source: its key, how it reads, how many documents it heads a section
    in (0 for a label a person added that the counts do not reach), whether the counts
    make it structure, and a person's word on it (None: none)."""

    key: str
    text: str
    documents: int
    learnt: bool
    override: bool | None = None

    @property
    def structure(self) -> bool:
        return self.learnt if self.override is None else self.override


# Each document's distinct heading lines outside ``` blocks (the chunker's headings:
# ingest/chunking.py), lower-cased with spaces collapsed, counted once per document. The
# fence pattern is non-greedy: each block from its opening to its closing fence.
_HEADINGS = r"""
    WITH docs AS (
        SELECT d.id, regexp_replace(d.text, %(fence)s, '', 'g') AS body
        FROM {document} d
        WHERE d.workspace_id = %(ws)s AND d.source_id = %(source)s AND d.status <> %(duplicate)s
          AND d.text LIKE '%%#%%'
    ),
    heads AS (
        SELECT DISTINCT docs.id,
               lower(regexp_replace(btrim(m[1]), '\s+', ' ', 'g')) AS label,
               btrim(m[1]) AS raw
        FROM docs, regexp_matches(docs.body, %(heading)s, 'gn') AS m
    )
    SELECT label, count(DISTINCT id), mode() WITHIN GROUP (ORDER BY raw)
    FROM heads GROUP BY label HAVING count(DISTINCT id) >= %(threshold)s
    ORDER BY count(DISTINCT id) DESC, label
    LIMIT %(limit)s
"""

_DOCUMENTS = """
    SELECT count(*) FROM {document} d
    WHERE d.workspace_id = %(ws)s AND d.source_id = %(source)s AND d.status <> %(duplicate)s
"""


def learnt_section_labels(workspace: Workspace, source: Source) -> list[SectionLabel]:
    """The labels the source's counts make structure, most common first (at most
    MAX_LABELS); `source` must be the workspace's (callers look it up with
    `get_source_for_workspace`)."""
    params: dict[str, int | str] = {
        "ws": workspace.pk,
        "source": source.pk,
        "duplicate": DocumentStatus.DUPLICATE,
        "fence": "```.*?```",
        "heading": rf"^#{{1,6}}[ \t]+([^\n]{{1,{MAX_LABEL_CHARS}}})$",
        "limit": MAX_LABELS,
    }
    tables = {"document": Document._meta.db_table}
    with connection.cursor() as cursor:
        cursor.execute(_DOCUMENTS.format(**tables), params)
        documents = int(cursor.fetchone()[0])
        if documents < MIN_DOCUMENTS:
            return []
        params["threshold"] = document_threshold(documents)
        cursor.execute(_HEADINGS.format(**tables), params)
        rows = cursor.fetchall()
    merged: dict[str, SectionLabel] = {}
    for _, count, raw in rows:
        key = label_key(raw)
        if key and (key not in merged or merged[key].documents < count):
            merged[key] = SectionLabel(key=key, text=_shown(raw), documents=count, learnt=True)
    return sorted(merged.values(), key=lambda label: (-label.documents, label.key))


def _shown(raw: str) -> str:
    return _MARKS.sub("", raw)[:MAX_LABEL_CHARS] or raw[:MAX_LABEL_CHARS]


def section_labels(workspace: Workspace, source: Source) -> list[SectionLabel]:
    """The learnt labels with a person's word on each, then the labels a person added that
    the counts did not learn: what the quality page lists for the source."""
    overrides = _overrides(workspace, source)
    labels = [
        SectionLabel(
            key=label.key,
            text=label.text,
            documents=label.documents,
            learnt=True,
            override=overrides.pop(label.key).structure if label.key in overrides else None,
        )
        for label in learnt_section_labels(workspace, source)
    ]
    labels += [
        SectionLabel(
            key=row.label, text=row.text, documents=0, learnt=False, override=row.structure
        )
        for row in sorted(overrides.values(), key=lambda row: row.label)
    ]
    return labels


def structure_label_keys(workspace: Workspace, source: Source) -> frozenset[str]:
    """The keys of the labels that are structure in the source (learnt, less those a person
    said are not, plus those a person added): what extraction makes no entity of."""
    return frozenset(label.key for label in section_labels(workspace, source) if label.structure)


def _overrides(workspace: Workspace, source: Source) -> dict[str, SectionLabelOverride]:
    return {
        row.label: row
        for row in SectionLabelOverride.objects.for_workspace(workspace).filter(source=source)
    }
