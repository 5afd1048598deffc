"""Sources whose documents are written as the parsers leave them (a title, then
Markdown-style headings), straight into the tables, in the shapes of three generators: what
a source learns as section labels depends on its documents' text only
(knowledge/selectors/section_labels.py)."""

from __future__ import annotations

from ingest.models import Document, DocumentStatus, Source, SourceKind

HOSTILE = '<script>alert("x")</script>'
# A label of words that needs escaping all the same.
AMPERSAND = 'Usage & "Notes"'

# Manual pages; one has a section of its own.
MANUAL = {
    "frob": ["NAME", "SYNOPSIS", "DESCRIPTION", "Quillwheel"],
    "knit": ["NAME", "SYNOPSIS", "DESCRIPTION"],
    "purl": ["NAME", "SYNOPSIS", "DESCRIPTION"],
}
# Class pages of an API reference, with a heading to escape each, and member headings (names
# of code, never labels).
CLASSES = {
    f"Class {name}": ["Method Summary", "Constructor Detail", AMPERSAND, "equals", "hashCode"]
    for name in ("Spindle", "Bobbin", "Treadle")
}
# Function pages with parameter sections.
FUNCTIONS = {f"gearbox.{n}": ["Parameters", "Notes"] for n in ("shift", "clutch", "idle")}


def make_source(workspace, name: str, pages: dict[str, list[str]]) -> Source:
    """A source whose documents' text is a title and these headings, each over a line."""
    source = Source.objects.create(workspace=workspace, kind=SourceKind.UPLOAD, name=name)
    for index, (title, headings) in enumerate(pages.items()):
        body = "".join(f"## {heading}\n\nSome text about {title}.\n\n" for heading in headings)
        Document.objects.create(
            workspace=workspace, source=source, path=f"{index}.html", title=title,
            text=f"# {title}\n\n{body}", status=DocumentStatus.DONE,
            content_hash=f"{name}-{index}",
        )  # fmt: skip
    return source
