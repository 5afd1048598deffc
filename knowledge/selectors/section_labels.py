"""Section labels a source repeats: the headings its documents share (a reference's NAME,
SYNOPSIS, DESCRIPTION, SEE ALSO; an API reference's "Method Summary", "Parameters",
"Returns"; "Notes", "Examples"), and the terms of definition lists they share (Javadoc's
"Parameters:", "Throws:", "Specified by:" under each member), which are the documents'
structure, not their subjects.

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
from knowledge.canonical import EDGE_PUNCTUATION, canonical_name
from knowledge.models import SectionLabelOverride
from workspaces.models import Workspace

# The defaults of the boilerplate counts (ingest/boilerplate.py MIN_DOCUMENTS): three pages
# are a pattern, two may be a coincidence.
MIN_DOCUMENTS = 3
# In a large source a label must also be common: 5 % of 300 pages is 15, of 2,000 pages 100.
# Less let shared sections in: of 150 pages of a manual of commands, a section three or
# four commands include ("MERGE STRATEGIES", "Commit Limiting") is a subject, while the
# labels head from 8 % ("NOTES") to all of them.
MIN_SHARE = 0.05
# A section label is short; longer repeated headings are titles (and bound what is read).
MAX_LABEL_CHARS = 80
# At most this many labels per source are learnt and shown, most common first.
MAX_LABELS = 300

# Markdown emphasis and code marks around a heading's text ("**NAME**", "`Returns`"), and
# the permalink glyphs some generators leave at its end.
_MARKS = re.compile(r"^[\s*_`#¶§]+|[\s*_`#¶§]+$")


# A heading that is a name of code, not words: in code marks, or with code punctuation
# (calls, generics, paths, dotted or snake_case names), or one token in lower or camel case
# ("equals", "hashCode": an API reference's member headings, repeated on every class that
# has the member). Section labels are words: "SYNOPSIS", "Parameters", "See also".
_CODE_PUNCTUATION = re.compile(r"[()\[\]{}<>=/\\_]|::|\w\.\w")
_CAMEL = re.compile(r"[a-z][A-Z]")


def looks_like_name(raw: str) -> bool:
    """Whether a heading is a name of code rather than a section label (see above)."""
    text = raw.strip()
    if text.startswith("`"):
        return True
    text = _MARKS.sub("", text).strip(EDGE_PUNCTUATION + " ")
    if _CODE_PUNCTUATION.search(text):
        return True
    return " " not in text and bool(text) and (text[0].islower() or bool(_CAMEL.search(text)))


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


# A heading line as the chunker reads one (ingest/chunking.py), a definition's term (a line
# followed by a ": " definition line, as the parsers write definition lists: Javadoc's
# "Parameters:", "Throws:", "Specified by:"), or a ``` fence: no heading inside a code block
# (a "# comment" in an example). Headings longer than a label are titles.
_LINE = re.compile(
    rf"^[ \t]*(?:(```)[^\n]*|#{{1,6}}[ \t]+([^\n]{{1,{MAX_LABEL_CHARS}}}?)[ \t]*"
    rf"|([^\s:#|>`-][^\n]{{0,{MAX_LABEL_CHARS - 1}}}?)[ \t]*(?=\n: ))$",
    re.M,
)
# Documents whose text is read at a time.
_BATCH = 200
# Sources whose documents' headings this process keeps (the most recently used ones).
_CACHED_SOURCES = 32


def headings(text: str) -> dict[str, str]:
    """The distinct section headings (and definition terms) of a parsed text outside code
    blocks: key -> the first spelling."""
    found: dict[str, str] = {}
    code = False
    for match in _LINE.finditer(text):
        if match.group(1):
            code = not code
        elif not code and (match.group(2) or match.group(3)):
            raw = (match.group(2) or match.group(3)).strip()
            key = label_key(raw)
            if key and not looks_like_name(raw):
                found.setdefault(key, raw)
    return found


@dataclass(frozen=True, slots=True)
class _Read:
    """What a version of a document's text gives: its headings (key -> spelling) and its
    title's words."""

    version: str
    headings: dict[str, str]
    title: str


def _words(text: str) -> str:
    """The words of a text, case folded, each between spaces: " git add 1 manual page "."""
    return f" {' '.join(re.findall(r'\w+', text.casefold()))} "


class _HeadingCache:
    """Each document's headings, by source, with the version of the text they were read
    from (its `updated_at`, which every parse moves): extraction asks for a source's labels
    once per group of documents, and a crawl of 2,000 pages would otherwise read all their
    text again each time. Only new and changed documents are read; the counts are summed
    from what is kept."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sources: OrderedDict[int, dict[int, _Read]] = OrderedDict()

    def documents(self, workspace: Workspace, source: Source) -> list[_Read]:
        versions = dict(
            Document.objects.for_workspace(workspace)
            .filter(source=source)
            .exclude(status=DocumentStatus.DUPLICATE)
            .values_list("pk", "updated_at")
        )
        with self.lock:
            kept = self.sources.pop(source.pk, {})
        current = {
            pk: kept[pk] for pk in versions if pk in kept and kept[pk].version == str(versions[pk])
        }
        missing = sorted(set(versions) - set(current))
        for start in range(0, len(missing), _BATCH):
            rows = (
                Document.objects.for_workspace(workspace)
                .filter(pk__in=missing[start : start + _BATCH])
                .values_list("pk", "updated_at", "text", "title")
            )
            for pk, updated_at, text, title in rows:
                current[pk] = _Read(str(updated_at), headings(text or ""), _words(title))
        with self.lock:
            self.sources[source.pk] = current
            while len(self.sources) > _CACHED_SOURCES:
                self.sources.popitem(last=False)
        return list(current.values())


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
    for read in documents:
        counts.update(read.headings.keys())
        for key, raw in read.headings.items():
            spellings.setdefault(key, Counter())[raw] += 1
    threshold = document_threshold(len(documents))
    common = [key for key, count in counts.items() if count >= threshold]
    subjects = _subjects(common, [read.title for read in documents], threshold)
    learnt = [
        SectionLabel(
            key=key,
            text=_shown(spellings[key].most_common(1)[0][0]),
            documents=count,
            learnt=True,
        )
        for key, count in counts.items()
        if count >= threshold and key not in subjects
    ]
    return sorted(learnt, key=lambda label: (-label.documents, label.key))[:MAX_LABELS]


def _subjects(keys: list[str], titles: list[str], threshold: int) -> set[str]:
    """Those of the keys the source's titles name as often as its headings repeat them: the
    source's own subject ("GIT" closes every page of a manual of git commands, titled
    "git-add(1)"), which its pages name everywhere, not a label of its structure."""
    found = set()
    for key in keys:
        phrase = _words(key)
        if phrase.strip() and sum(phrase in title for title in titles) >= threshold:
            found.add(key)
    return found


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
