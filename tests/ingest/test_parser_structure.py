"""What documentation pages and PDFs say about their own structure survives parsing: clean
headings, term and `: ` definition lines, tables with a header separator, the site's own
links, and a PDF's outline as headings; owner-password-only PDFs open."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from ingest.parsers import ParsedDocument, ParseError, ParserLimits, parse
from knowledge.extraction.structure import read_structure
from tests.ingest.factories import pdf_bytes

LIMITS = ParserLimits()
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")
FILLER = (
    "<p>This paragraph explains the feature in ordinary prose, long enough for a reader and "
    "for the extractor to see it as the main content of the page rather than a menu.</p>"
)


def html(page: str, filename: str = "page.html") -> ParsedDocument:
    return parse(page.encode(), filename=filename, limits=LIMITS)


def sphinx_page(body: str, title: str = "pkg.tools — Handy tools") -> str:
    """A page shaped like Sphinx's basic/classic theme output."""
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
    <title>{title} — Pkg 1.0 documentation</title>
    <link rel="canonical" href="https://docs.example.org/library/tools.html"></head><body>
    <div class="related" role="navigation"><h3>Navigation</h3><ul>
      <li class="right"><a href="../genindex.html" title="General Index">index</a></li>
      <li class="right"><a href="../py-modindex.html">modules</a> |</li>
      <li class="right"><a href="next.html" title="Other tools">next</a> |</li>
      <li><a href="../index.html">Pkg 1.0 documentation</a> »</li></ul></div>
    <div class="document"><div class="documentwrapper"><div class="bodywrapper">
    <div class="body" role="main"><section id="module-pkg.tools">
    <h1><code class="xref py py-mod docutils literal notranslate"><span class="pre">pkg.tools</span></code>
      — Handy tools<a class="headerlink" href="#module-pkg.tools" title="Permalink to this heading">¶</a></h1>
    {FILLER}
    {body}
    </section></div></div></div>
    <div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><ul>
      <li><a class="reference internal" href="#">Sidebar only tools link</a></li>
      <li><a href="other.html">Sidebar other page</a></li></ul></div></div>
    <div class="footer">© Copyright. <a href="https://www.sphinx-doc.org/">Sphinx</a></div>
    </body></html>"""


SPHINX_API = """
<section id="widgets"><h2>Widgets<a class="headerlink" href="#widgets" title="Permalink to this heading">¶</a></h2>
<p>Widgets hold things. See <a class="reference internal" href="gadgets.html#pkg.gadgets.Gadget"
 title="pkg.gadgets.Gadget"><code class="xref py py-class docutils literal notranslate"><span class="pre">Gadget</span></code></a>
 and the <a class="reference external" href="https://example.com/widgets">widget history</a>.</p>
<dl class="py class">
<dt class="sig sig-object py" id="pkg.tools.Widget">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><span class="sig-prename descclassname"><span class="pre">pkg.tools.</span></span><span class="sig-name descname"><span class="pre">Widget</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">name</span></span></em>, <em class="sig-param"><span class="o"><span class="pre">*</span></span><span class="n"><span class="pre">parts</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#pkg.tools.Widget" title="Permalink to this definition">¶</a></dt>
<dd><p>A <code class="xref py py-class docutils literal notranslate"><span class="pre">Widget</span></code> groups
parts under one name, so that they can be
handed around together.</p>
<p>Widgets compare equal when their parts do.</p>
<div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span><span class="gp">&gt;&gt;&gt; </span>Widget("w", 1, 2).parts
(1, 2)
</pre></div></div>
<dl class="py method">
<dt class="sig sig-object py" id="pkg.tools.Widget.add_part">
<span class="sig-name descname"><span class="pre">add_part</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">part</span></span></em>, <em class="sig-param"><span class="o"><span class="pre">**</span></span><span class="n"><span class="pre">options</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#pkg.tools.Widget.add_part" title="Permalink to this definition">¶</a></dt>
<dd><p>Add <em>part</em> at the end; <em>options</em> are passed to <code class="docutils literal notranslate"><span class="pre">__init__</span></code>.</p>
</dd></dl>
</dd></dl>
</section>
"""


def definitions(text: str) -> dict[str, str]:
    """term line -> definition line, as the knowledge extractor reads them."""
    found = read_structure(text).definitions
    return {
        text[d.term.start : d.term.end]: text[d.definition.start : d.definition.end] for d in found
    }


# --- permalink glyphs --------------------------------------------------------------------------


def test_sphinx_headings_title_and_terms_carry_no_permalink_glyphs():
    doc = html(sphinx_page(SPHINX_API))
    assert doc.title == "pkg.tools — Handy tools"
    assert doc.metadata["title"] == "pkg.tools — Handy tools"
    assert doc.text.startswith("# `pkg.tools` — Handy tools\n")
    assert "\n## Widgets\n" in doc.text
    assert "¶" not in doc.text


def test_mkdocs_material_headings_carry_no_permalink_glyphs():
    page = f"""<html><head><title>Configuration - Site</title></head><body>
    <header class="md-header"><a href="index.html">Site</a></header>
    <div class="md-content"><article class="md-content__inner md-typeset">
    <h1 id="configuration">Configuration<a class="headerlink" href="#configuration" title="Permanent link">¶</a></h1>
    {FILLER}
    <h2 id="options">Options<a class="headerlink" href="#options" title="Permanent link">#</a></h2>
    {FILLER}</article></div></body></html>"""
    doc = html(page)
    assert "# Configuration\n" in doc.text
    assert "\n## Options\n" in doc.text
    assert "¶" not in doc.text and "Options #" not in doc.text


def test_docusaurus_github_and_anchorjs_heading_anchors_are_dropped():
    page = f"""<html><head><title>Install | Project</title></head><body><main><article>
    <h1>Install</h1>{FILLER}
    <h2 class="anchor anchorWithStickyNavbar_LWe7" id="requirements">Requirements<a href="#requirements"
      class="hash-link" aria-label="Direct link to Requirements" title="Direct link to Requirements">\u200b</a></h2>
    {FILLER}
    <h2><a id="user-content-usage" class="anchor" aria-hidden="true" href="#usage"><svg class="octicon
      octicon-link" viewBox="0 0 16 16"><path d="M7.775 3.275"></path></svg></a>Usage</h2>
    {FILLER}
    <h3 id="flags">Flags <a class="anchorjs-link" aria-label="Anchor" href="#flags">🔗</a></h3>
    {FILLER}
    <h3 id="env">Environment <a href="#env">§</a></h3>
    {FILLER}</article></main></body></html>"""
    doc = html(page)
    for heading in ("## Requirements\n", "## Usage\n", "### Flags\n", "### Environment\n"):
        assert f"\n{heading}" in doc.text
    assert not re.search("[\u200b🔗§]", doc.text)


def test_title_loses_a_trailing_glyph_even_from_the_title_tag():
    page = "<html><head><title>Release notes ¶</title></head><body><ul><li>fixed</li></ul></body></html>"
    assert html(page).title == "Release notes"


def test_visible_text_fallback_drops_permalink_anchors():
    page = """<html><head><title>Harbour office</title></head><body><aside>
    <h3>Opening hours<a class="headerlink" href="#hours">¶</a></h3> Mon-Fri 9-17</aside>
    <footer>Contact: Pier 4, <b>harbour office</b></footer></body></html>"""
    # The heading is a heading wherever the text comes from, under the page's title.
    text = html(page).text
    assert text.startswith("# Harbour office\n\n### Opening hours\n\nMon-Fri 9-17")
    assert "Contact: Pier 4" in text
    assert "¶" not in text


# --- definition lists ----------------------------------------------------------------------------


def test_glossary_definition_list_gives_term_then_colon_definition_lines():
    page = f"""<html><head><title>Glossary</title></head><body><div role="main">
    <h1>Glossary<a class="headerlink" href="#glossary">¶</a></h1>{FILLER}
    <dl class="glossary simple">
    <dt id="term-awaitable">awaitable<a class="headerlink" href="#term-awaitable" title="Permalink to this term">¶</a></dt>
    <dd><p>An object that can be used in an
    <code class="docutils literal notranslate"><span class="pre">await</span></code> expression.</p>
    <p>See also the coroutine entry.</p></dd>
    <dt id="term-0"><code class="docutils literal notranslate"><span class="pre">&gt;&gt;&gt;</span></code><a class="headerlink" href="#term-0">¶</a></dt>
    <dd>The default prompt of the interactive shell.</dd>
    </dl></div></body></html>"""
    doc = html(page)
    assert "awaitable\n: An object that can be used in an `await` expression.\n" in doc.text
    assert "\n\nSee also the coroutine entry." in doc.text
    assert "`>>>`\n: The default prompt of the interactive shell." in doc.text
    assert definitions(doc.text) == {
        "awaitable": "An object that can be used in an `await` expression.",
        "`>>>`": "The default prompt of the interactive shell.",
    }


def test_sphinx_api_entries_have_the_backticked_dotted_name_on_the_term_line():
    doc = html(sphinx_page(SPHINX_API))
    found = definitions(doc.text)
    assert found["class `pkg.tools.Widget(name, *parts)`"] == (
        "A `Widget` groups parts under one name, so that they can be handed around together."
    )
    # A method is printed with its bare name, but named by its class and module.
    assert found["`pkg.tools.Widget.add_part(part, **options)`"] == (
        "Add *part* at the end; *options* are passed to `__init__`."
    )


def test_later_paragraphs_and_code_of_a_definition_follow_it_as_blocks():
    doc = html(sphinx_page(SPHINX_API))
    after = doc.text.split("handed around together.\n", 1)[1]
    assert after.startswith("\nWidgets compare equal when their parts do.\n")
    assert '```\n>>> Widget("w", 1, 2).parts\n(1, 2)\n```' in after


def test_several_terms_for_one_definition_keep_the_last_next_to_it():
    page = f"""<html><body><article><h1>Options</h1>{FILLER}<dl>
    <dt><kbd>-v</kbd></dt><dt><kbd>--verbose</kbd></dt>
    <dd><p>Print every step.</p></dd></dl></article></body></html>"""
    doc = html(page)
    assert "`-v`\n\n`--verbose`\n: Print every step." in doc.text


# --- inline code, escapes, tables ----------------------------------------------------------------


def test_identifiers_read_naturally_in_code_and_prose_and_emphasis_stays():
    page = f"""<html><body><article><h1>Calling</h1>{FILLER}
    <p>Override <code>__init__</code> to accept <code>*args</code>; the file __init__.py takes
*args and **kwargs, and <em>snake_case</em> names are <strong>fine</strong>. A literal \\_ stays.</p>
    </article></body></html>"""
    doc = html(page)
    assert "Override `__init__` to accept `*args`;" in doc.text
    prose = "the file __init__.py takes\n*args and **kwargs, and *snake_case* names are **fine**."
    assert prose in doc.text
    assert "A literal \\_ stays." in doc.text


def test_inline_code_with_a_source_line_break_stays_inline():
    page = f"""<html><body><article><h1>Sorting</h1>{FILLER}
    <p>Use <code class="docutils literal"><span class="pre">heapq.nsmallest(1,</span>
    <span class="pre">iterable)</span></code> for the smallest.</p></article></body></html>"""
    assert "Use `heapq.nsmallest(1, iterable)` for the smallest." in html(page).text


def test_table_with_a_header_row_keeps_a_separator_line():
    page = f"""<html><body><article><h1>Operations</h1>{FILLER}
    <table class="docutils align-default"><thead><tr class="row-odd">
      <th class="head"><p>Operation</p></th><th class="head"><p>Result</p></th></tr></thead>
    <tbody><tr class="row-even"><td><p><code class="docutils literal"><span class="pre">x or y</span></code></p></td>
      <td><p>if <em>x</em> is false, then <em>y</em></p></td></tr>
    <tr class="row-odd"><td><p><code class="docutils literal"><span class="pre">not x</span></code></p></td>
      <td><p>the opposite</p></td></tr></tbody></table></article></body></html>"""
    doc = html(page)
    assert (
        "| Operation | Result |\n|---|---|\n| `x or y` | if *x* is false, then *y* |\n" in doc.text
    )
    (table,) = read_structure(doc.text).tables
    assert [doc.text[c.start : c.end] for c in table.header] == ["Operation", "Result"]


# --- links ---------------------------------------------------------------------------------------


def test_links_metadata_keeps_the_sites_own_content_links_with_their_text():
    doc = html(sphinx_page(SPHINX_API))
    links = doc.metadata["links"]
    assert {
        "text": "Gadget",
        "url": "gadgets.html#pkg.gadgets.Gadget",
        "fragment": "pkg.gadgets.Gadget",
    } in links
    texts = [link["text"] for link in links]
    # Sidebar, related bar ("next", "index", "modules"), footer and other sites are left out.
    for left_out in ("next", "index", "modules", "Sidebar other page", "Sphinx", "widget history"):
        assert left_out not in texts
    assert len(texts) == len(set(texts))


def test_links_to_the_same_page_are_marked_and_glyph_links_skipped():
    page = f"""<html><head><link rel="canonical" href="https://example.org/guide/"></head><body>
    <article><h1>Guide</h1>{FILLER}
    <p>Read <a href="#setup">the setup section</a>, then <a href="https://example.org/faq/">the FAQ</a>
    and <a href="//other.example/x">another site</a>; <a href="/api/">the API</a> twice:
    <a href="/api/">the API</a>. <a href="#setup">¶</a> <a href="mailto:a@example.org">mail us</a>.</p>
    </article></body></html>"""
    links = html(page).metadata["links"]
    assert links == [
        {"text": "the setup section", "url": "#setup", "fragment": "setup", "same_page": True},
        {"text": "the FAQ", "url": "https://example.org/faq/"},
        {"text": "the API", "url": "/api/"},
    ]


def test_links_are_bounded_in_number_and_text_length():
    prose = FILLER[3:-4] * 4
    items = "".join(
        f'<p>Topic {n} is explained on <a href="p{n}.html">page number {n}</a> in depth.</p>'
        for n in range(300)
    )
    page = f"""<html><body><article><h1>Index</h1>{FILLER}
    <p>{prose} Also <a href="long.html">{"word " * 100}</a> and more.</p>
    {items}</article></body></html>"""
    links = html(page).metadata["links"]
    assert len(links) == 200
    assert links[0] == {"text": ("word " * 40).strip(), "url": "long.html"}
    assert links[1] == {"text": "page number 0", "url": "p0.html"}
    assert links[-1] == {"text": "page number 198", "url": "p198.html"}


@pytest.mark.skipif(not PYTHON_DOCS.is_dir(), reason="the Python 3.11 HTML docs are not installed")
def test_installed_python_collections_page_reads_as_structure():
    data = (PYTHON_DOCS / "library" / "collections.html").read_bytes()
    doc = parse(data, filename="collections.html", limits=LIMITS)
    assert doc.title == "collections — Container datatypes"
    assert "¶" not in doc.text
    assert re.search(
        r"^[^\n]*`collections\.ChainMap[`(][^\n]*\n: A `ChainMap` groups", doc.text, re.M
    )
    assert "collections.ChainMap" in " ".join(definitions(doc.text))
    assert any(link["url"].startswith("stdtypes.html#dict") for link in doc.metadata["links"])


# --- PDF -----------------------------------------------------------------------------------------


def encrypted_pdf(algorithm: str, user_password: str) -> bytes:
    writer = PdfWriter(
        clone_from=PdfReader(io.BytesIO(pdf_bytes(["Quarterly figures", "Page two"])))
    )
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("algorithm", ["AES-128", "AES-256", "RC4-128"])
def test_pdf_with_only_an_owner_password_opens_like_any_other(algorithm):
    data = encrypted_pdf(algorithm, user_password="")
    assert PdfReader(io.BytesIO(data)).is_encrypted
    doc = parse(data, filename="figures.pdf", limits=LIMITS)
    assert doc.text == "Quarterly figures\n\nPage two"
    assert [p.number for p in doc.pages] == [1, 2]


@pytest.mark.parametrize("algorithm", ["AES-256", "RC4-128"])
def test_pdf_needing_a_user_password_is_refused_with_the_clear_message(algorithm):
    data = encrypted_pdf(algorithm, user_password="secret")
    with pytest.raises(ParseError) as caught:
        parse(data, filename="figures.pdf", limits=LIMITS)
    assert caught.value.message.startswith("The PDF is encrypted (password-protected);")


def test_pdf_outline_becomes_heading_lines_and_metadata():
    pages = ["Introduction\nWhy this exists.", "Setup\nInstall it.", "Run it daily."]
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.add_outline_item(title="Introduction", page_number=0)
    setup = writer.add_outline_item(title="Getting started", page_number=1)
    writer.add_outline_item(title="Setup", page_number=1, parent=setup)
    writer.add_outline_item(title="Daily use", page_number=2, parent=setup)
    out = io.BytesIO()
    writer.write(out)
    doc = parse(out.getvalue(), filename="manual.pdf", limits=LIMITS)
    assert doc.title == "Introduction"
    page_texts = [doc.text[p.start : p.end] for p in doc.pages]
    assert page_texts == [
        "# Introduction\nWhy this exists.",  # the line the bookmark names is the heading
        "# Getting started\n## Setup\nInstall it.",  # a title the page lacks goes first
        "## Daily use\nRun it daily.",
    ]
    assert doc.metadata["outline"] == [
        {"title": "Introduction", "level": 1, "page": 1},
        {"title": "Getting started", "level": 1, "page": 2},
        {"title": "Setup", "level": 2, "page": 2},
        {"title": "Daily use", "level": 2, "page": 3},
    ]
    headings = read_structure(doc.text).headings
    assert [(h.level, doc.text[h.title.start : h.title.end]) for h in headings] == [
        (1, "Introduction"), (1, "Getting started"), (2, "Setup"), (2, "Daily use"),
    ]  # fmt: skip


def test_pdf_without_outline_has_no_outline_metadata():
    doc = parse(pdf_bytes(["Plain page"]), filename="plain.pdf", limits=LIMITS)
    assert "outline" not in doc.metadata
    assert doc.text == "Plain page"
