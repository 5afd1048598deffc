"""Section labels a source repeats: the headings its documents share (a reference's NAME,
SYNOPSIS, DESCRIPTION, SEE ALSO; an API reference's "Method Summary", "Parameters",
"Returns"; "Notes", "Examples"), which are the documents' structure, not their subjects.

Learnt per source from the same kind of statistics as its boilerplate
(ingest/boilerplate.py): a heading text is a section label when it heads a section in at
least max(MIN_DOCUMENTS, MIN_SHARE of) the source's documents. No list of words: whatever
generator built the pages, the labels it puts on every page are found by counting, and a
heading that one page has (its own subject, or a name it documents) stays a heading that
may name an entity. Duplicates count once, like boilerplate; code blocks are no headings
(a "# comment" in an example). Each document's headings are read from its text once per
process and version of the text (`_HeadingCache`): extraction asks for the labels once per
group of documents, all through a crawl.

A person can correct the answer per source (`SectionLabelOverride`): a learnt label that
is a subject after all, or a label the counts missed. `structure_label_keys` is what
extraction leaves out (knowledge/actions/extraction/materialize.py); `section_labels` is
what the quality page shows.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass

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


# A heading line as the chunker reads one (ingest/chunking.py), or a ``` fence: no heading
# inside a code block (a "# comment" in an example). Headings longer than a label are titles.
_LINE = re.compile(
    rf"^[ \t]*(?:(```)[^\n]*|#{{1,6}}[ \t]+([^\n]{{1,{MAX_LABEL_CHARS}}}?)[ \t]*)$", re.M
)
# Documents whose text is read at a time.
_BATCH = 200
# Sources whose documents' headings this process keeps (the most recently used ones).
_CACHED_SOURCES = 32


def headings(text: str) -> dict[str, str]:
    """The distinct section headings of a parsed text outside code blocks: key -> the first
    spelling."""
    found: dict[str, str] = {}
    code = False
    for match in _LINE.finditer(text):
        if match.group(1):
            code = not code
        elif not code and match.group(2):
            raw = match.group(2).strip()
            key = label_key(raw)
            if key:
                found.setdefault(key, raw)
    return found


class _HeadingCache:
    """Each document's headings, by source, with the version of the text they were read
    from (its `updated_at`, which every parse moves): extraction asks for a source's labels
    once per group of documents, and a crawl of 2,000 pages would otherwise read all their
    text again each time. Only new and changed documents are read; the counts are summed
    from what is kept."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sources: OrderedDict[int, dict[int, tuple[str, dict[str, str]]]] = OrderedDict()

    def documents(self, workspace: Workspace, source: Source) -> list[dict[str, str]]:
        versions = dict(
            Document.objects.for_workspace(workspace)
            .filter(source=source)
            .exclude(status=DocumentStatus.DUPLICATE)
            .values_list("pk", "updated_at")
        )
        with self.lock:
            kept = self.sources.pop(source.pk, {})
        current = {
            pk: kept[pk] for pk in versions if pk in kept and kept[pk][0] == str(versions[pk])
        }
        missing = sorted(set(versions) - set(current))
        for start in range(0, len(missing), _BATCH):
            rows = (
                Document.objects.for_workspace(workspace)
                .filter(pk__in=missing[start : start + _BATCH])
                .values_list("pk", "updated_at", "text")
            )
            for pk, updated_at, text in rows:
                current[pk] = (str(updated_at), headings(text or ""))
        with self.lock:
            self.sources[source.pk] = current
            while len(self.sources) > _CACHED_SOURCES:
                self.sources.popitem(last=False)
        return [found for _, found in current.values()]


_cache = _HeadingCache()


def learnt_section_labels(workspace: Workspace, source: Source) -> list[SectionLabel]:
    """The labels the source's counts make structure, most common first (at most
    MAX_LABELS); `source` must be the workspace's (callers look it up with
    `get_source_for_workspace`)."""
    documents = _cache.documents(workspace, source)
    if len(documents) < MIN_DOCUMENTS:
        return []
    counts: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = {}
    for found in documents:
        counts.update(found.keys())
        for key, raw in found.items():
            spellings.setdefault(key, Counter())[raw] += 1
    threshold = document_threshold(len(documents))
    learnt = [
        SectionLabel(
            key=key,
            text=_shown(spellings[key].most_common(1)[0][0]),
            documents=count,
            learnt=True,
        )
        for key, count in counts.items()
        if count >= threshold
    ]
    return sorted(learnt, key=lambda label: (-label.documents, label.key))[:MAX_LABELS]


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
