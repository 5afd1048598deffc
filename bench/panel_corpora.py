"""The corpora of the quality panel (bench/panel.py): real documentation nobody here wrote,
from as many generators and formats as Debian's packages ship, each capped so the whole panel
runs in under an hour on two cores.

Why a table of its own: the panel, its page lists and the scripts that build labelled
samples all need the same definition of a corpus (where it is, how a user would bring it
in, where the crawl stops), and a corpus moved between tuning and judged-only must move
everywhere at once.

`split` says how a corpus may be used: "tuning" corpora may be read while changing the
code; "judged" corpora are judged only: nobody changing extraction, parsing, chunking or
retrieval reads their pages, samples or questions; only their figures are looked at, once per
round, at a recorded commit (docs/BENCHMARKS.md).

HTML corpora are served by Python's http.server and crawled recursively from `start`, as a
user would, keeping to `allow` (regular expressions on the whole URL) up to `max_pages`.
File corpora are uploaded file by file (PDF, DOCX, Markdown, text), as a user would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Corpus:
    name: str
    generator: str  # the documentation generator or file format
    package: str  # where it comes from: `apt-get install <package>`
    root: Path
    split: str  # "tuning" or "judged"
    start: str = "index.html"  # HTML: the crawl's first page, relative to root
    allow: tuple[str, ...] = ()  # HTML: URL patterns the crawl keeps to
    max_pages: int = 300
    files: tuple[str, ...] = ()  # file corpora: paths relative to root, uploaded in order
    questions: str = field(default="")  # bench/data/panel/<name>/questions.jsonl by default

    @property
    def kind(self) -> str:
        return "files" if self.files else "crawl"

    @property
    def data_dir(self) -> Path:
        return Path(__file__).resolve().parent / "data" / "panel" / self.name


# The start of every URL the panel's local server gives: allow patterns anchor on it.
_SITE = r"^https?://[^/]+"

CORPORA: tuple[Corpus, ...] = (
    Corpus(
        name="python",
        generator="Sphinx",
        package="python3.11-doc",
        root=Path("/usr/share/doc/python3.11/html"),
        split="tuning",
        start="library/index.html",
        allow=(_SITE + r"/library/",),
        max_pages=60,
    ),
    Corpus(
        name="django",
        generator="Sphinx (Django theme)",
        package="python-django-doc",
        root=Path("/usr/share/doc/python-django-doc/html"),
        split="tuning",
        start="topics/index.html",
        allow=(_SITE + r"/topics/",),
        max_pages=70,
    ),
    Corpus(
        name="git",
        generator="AsciiDoc",
        package="git-doc",
        root=Path("/usr/share/doc/git-doc"),
        split="tuning",
        start="git.html",
        allow=(_SITE + r"/git[^/]*\.html$",),
        max_pages=60,
    ),
    Corpus(
        name="rust-book",
        generator="mdBook",
        package="rust-doc",
        root=Path("/usr/share/doc/rust-doc/html/book"),
        split="tuning",
        start="title-page.html",
        allow=(_SITE + r"/(ch\d\d-[^/]*|appendix-[^/]*|foreword|title-page)\.html$",),
        max_pages=110,
    ),
    Corpus(
        name="javadoc",
        generator="Javadoc",
        package="openjdk-17-doc",
        root=Path("/usr/share/doc/openjdk-17-jre-headless/api"),
        split="tuning",
        start="java.base/java/util/package-summary.html",
        allow=(_SITE + r"/java\.base/java/util/[^/]+\.html$",),
        max_pages=140,
    ),
    Corpus(
        name="handbook",
        generator="DocBook (Publican), a book of prose",
        package="debian-handbook",
        root=Path("/usr/share/doc/debian-handbook/html/en-US"),
        split="tuning",
        start="index.html",
        allow=(_SITE + r"/[^/]+\.html$",),
        max_pages=130,
    ),
    Corpus(
        name="r-manuals",
        generator="PDF (Texinfo manuals typeset by TeX)",
        package="r-doc-pdf",
        root=Path("/usr/share/R/doc/manual"),
        split="tuning",
        files=("R-intro.pdf", "R-lang.pdf", "R-data.pdf", "R-FAQ.pdf", "R-admin.pdf"),
    ),
    Corpus(
        name="node",
        generator="Node.js's own doc tool (Markdown to HTML)",
        package="nodejs-doc",
        root=Path("/usr/share/doc/nodejs/api"),
        split="judged",
        start="index.html",
        allow=(_SITE + r"/[^/]+\.html$",),
        # 12 pages made 1,567 chunks: Node's pages are whole modules' references.
        max_pages=16,
    ),
    Corpus(
        name="rust-std",
        generator="rustdoc",
        package="rust-doc",
        root=Path("/usr/share/doc/rust-doc/html"),
        split="judged",
        start="std/index.html",
        allow=(_SITE + r"/std/",),
        # 49 pages made 3,818 chunks (a type's page lists every method and trait impl).
        max_pages=30,
    ),
    Corpus(
        name="octave",
        generator="Texinfo (split HTML)",
        package="octave-doc",
        root=Path("/usr/share/doc/octave/octave.html"),
        split="judged",
        start="index.html",
        max_pages=150,
    ),
)


def corpus(name: str) -> Corpus:
    for candidate in CORPORA:
        if candidate.name == name:
            return candidate
    raise KeyError(f"no corpus named {name!r}: choose one of {', '.join(c.name for c in CORPORA)}")
