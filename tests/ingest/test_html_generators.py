"""Pages of any documentation generator become text the chunker reads as their author laid
it out: every h1-h6 a `#` heading whatever its classes and wrappers, synopses and other
preformatted blocks fenced code, no Markdown escape left in prose; and every chunk of a
page has a heading path that starts with the page's title, none holding headings alone.

The pages are small and hand-made, in the shapes of AsciiDoc, DocBook, Texinfo, Javadoc and
Sphinx's classic theme (section divs, no article frame: where trafilatura dropped every
heading)."""

from __future__ import annotations

import re

from ingest.chunking import ChunkSpan, chunk_text
from ingest.embeddings import ApproximateCounter
from ingest.parsers import ParsedDocument, ParserLimits, parse

LIMITS = ParserLimits()
PROSE = (
    "This paragraph explains the command in ordinary prose, long enough for a reader and for "
    "the extractor to take it for the content of the page rather than a menu. "
)
# An escape trafilatura writes that must not survive outside code.
_ESCAPE = re.compile(r"\\[\[\]()#<>*_`~+-]|\*`|`\*")
_FENCED = re.compile(r"^```\n.*?^```$", re.M | re.S)


def html(page: str) -> ParsedDocument:
    return parse(page.encode(), filename="page.html", limits=LIMITS)


def chunks(doc: ParsedDocument, max_tokens: int = 60) -> list[ChunkSpan]:
    return chunk_text(doc.text, counter=ApproximateCounter(), max_tokens=max_tokens)


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def headings(text: str) -> list[str]:
    return [line for line in _FENCED.sub("", text).splitlines() if line.startswith("#")]


def assert_every_chunk_under(title: str, spans: list[ChunkSpan]) -> None:
    assert len(spans) > 2
    for span in spans:
        assert span.heading_path and span.heading_path[0] == title, span
        lines = [line for line in span.text.splitlines() if line.strip()]
        assert not all(line.startswith("#") for line in lines), f"headings alone: {span.text!r}"


def assert_no_escape(text: str) -> None:
    prose = re.sub(r"`[^`\n]+`", "", _FENCED.sub("", text))
    assert not _ESCAPE.search(prose), _ESCAPE.search(prose)


# --- AsciiDoc: a manual page ------------------------------------------------------------------

ASCIIDOC = f"""<!DOCTYPE html><html><head><title>frob-add(1)</title></head>
<body class="manpage"><div id="header"><h1>frob-add(1) Manual Page</h1>
<h2>NAME</h2><div class="sectionbody"><p>frob-add - Add widgets to the frobnicator</p></div></div>
<div id="content">
<div class="sect1"><h2 id="_synopsis">SYNOPSIS</h2><div class="sectionbody">
<div class="verseblock"><pre class="content"><em>frob add</em> [--verbose | -v] [--dry-run | -n]
          [--] [&lt;widget&gt;…]</pre></div></div></div>
<div class="sect1"><h2 id="_description">DESCRIPTION</h2><div class="sectionbody">
<div class="paragraph"><p>{PROSE * 3} The widget at <code>a[i]</code> is kept, and so is the
prose index a[i] and the note [see below].</p></div>
<div class="paragraph"><p>The <em><code>frob-add</code></em> command and <strong><code>--force</code></strong>
are code; <em>emphasis</em> stays emphasis.</p></div></div></div>
<div class="sect1"><h2 id="_examples">EXAMPLES</h2><div class="sectionbody">
<div class="ulist"><ul><li><p>Adds every <code>*.txt</code> widget:</p>
<div class="listingblock"><div class="content"><pre><code>$ frob add Widgets/\\*.txt
# the shell keeps the backslash</code></pre></div></div></li></ul></div>
<div class="paragraph"><p>{PROSE * 2}</p></div></div></div></div>
<div id="footer"><div id="footer-text">Last updated 2024-05-31</div></div></body></html>"""


def test_asciidoc_manual_page_sections_synopsis_and_escapes():
    doc = html(ASCIIDOC)
    # The header trafilatura leaves out holds the title and the NAME line: both kept.
    assert doc.text.startswith(
        "# frob-add(1) Manual Page\n\n## NAME\n\nfrob-add - Add widgets to the frobnicator\n\n"
        "## SYNOPSIS\n\n"
    )
    assert headings(doc.text)[:4] == [
        "# frob-add(1) Manual Page",
        "## NAME",
        "## SYNOPSIS",
        "## DESCRIPTION",
    ]
    assert "## EXAMPLES" in headings(doc.text)
    # The synopsis is code, its placeholders as they are, its emphasis gone.
    assert (
        "```\nfrob add [--verbose | -v] [--dry-run | -n]\n          [--] [<widget>…]\n```"
        in doc.text
    )
    # Code keeps its backslash, and its comment is code, not a heading.
    assert "```\n$ frob add Widgets/\\*.txt\n# the shell keeps the backslash\n```" in doc.text
    assert "prose index a[i] and the note [see below]." in doc.text
    assert "The `frob-add` command and `--force` are code; *emphasis* stays" in flat(doc.text)
    assert_no_escape(doc.text)
    assert_every_chunk_under("frob-add(1) Manual Page", chunks(doc))


# --- DocBook: a book's chapter ----------------------------------------------------------------

DOCBOOK = f"""<!DOCTYPE html><html><head><title>Chapter 12. Advanced Frobbing</title></head>
<body><div id="banner"><a href="index.html">The Frob Handbook</a></div>
<div class="chapter"><div class="titlepage"><div><div>
<h1 class="title"><a id="advanced"></a>Chapter 12. Advanced Frobbing</h1></div></div></div>
<div class="para">{PROSE * 2}</div>
<div class="section"><div class="titlepage"><div><div><h2 class="title">12.1. Arrays</h2>
</div></div></div><div class="para">{PROSE * 2} Write <code class="command">frob</code> as:</div>
<div class="cmdsynopsis"><p><code class="command">frob</code> [<em class="replaceable">options</em>]
 <em class="replaceable">file</em>…</p></div>
<pre class="screen"><code class="computeroutput"># </code><strong class="userinput"><code>frob --create /dev/md0 --level=0</code></strong>
<code class="computeroutput">frob: array /dev/md0 started.</code></pre>
<div class="section"><div class="titlepage"><div><div><h3 class="title">12.1.1. Levels</h3>
</div></div></div><div class="para">{PROSE * 3} A level (1) and a #hashtag stay.</div></div>
</div></div></body></html>"""


def test_docbook_chapter_titles_in_titlepage_divs_are_headings():
    doc = html(DOCBOOK)
    assert headings(doc.text) == [
        "# Chapter 12. Advanced Frobbing",
        "## 12.1. Arrays",
        "### 12.1.1. Levels",
    ]
    assert "```\nfrob [options] file…\n```" in doc.text
    assert "```\n# frob --create /dev/md0 --level=0\nfrob: array /dev/md0 started.\n```" in doc.text
    assert "A level (1) and a #hashtag stay." in doc.text
    assert_no_escape(doc.text)
    assert_every_chunk_under("Chapter 12. Advanced Frobbing", chunks(doc))


# --- Texinfo: a node -------------------------------------------------------------------------

TEXINFO = f"""<!DOCTYPE html><html><head><title>Frob Syntax (Frob Reference Manual)</title>
</head><body lang="en">
<div class="section-level-extent" id="Frob-Syntax">
<div class="nav-panel"><p>Next: <a href="Frob-Commands.html" accesskey="n" rel="next">Frob
Commands</a>, Previous: <a href="Introduction.html" rel="prev">Introduction</a>, Up:
<a href="Basics.html" rel="up">Basics</a> &nbsp; [<a href="index.html#SEC_Contents"
title="Table of contents" rel="contents">Contents</a>]</p></div><hr>
<h3 class="section" id="Frob-Syntax-1"><span>3.1 Frob Syntax<a class="copiable-link"
href="#Frob-Syntax-1"> &para;</a></span></h3>
<p>{PROSE * 2}</p>
<div class="example"><pre class="example-preformatted">frob [-v] <var class="var">file</var> \\
    [<var class="var">name</var>=<var class="var">value</var>]…</pre></div>
<dl class="table"><dt><code class="code">-v</code></dt><dd><p>Say what is done.</p></dd></dl>
<h4 class="subsection" id="Quoting"><span>3.1.1 Quoting<a class="copiable-link"
href="#Quoting"> &para;</a></span></h4>
<p>{PROSE * 3} Each <var class="var">name</var> is quoted with <samp class="samp">\\</samp>.</p>
</div></body></html>"""


def test_texinfo_node_sections_and_example_blocks():
    doc = html(TEXINFO)
    title = "Frob Syntax (Frob Reference Manual)"
    # The node's own heading is a section: the page's title stands above it.
    assert headings(doc.text) == [f"# {title}", "### 3.1 Frob Syntax", "#### 3.1.1 Quoting"]
    assert "```\nfrob [-v] file \\\n    [name=value]…\n```" in doc.text
    assert "`-v`\n: Say what is done." in doc.text
    assert "¶" not in doc.text
    assert_no_escape(doc.text)
    assert_every_chunk_under(title, chunks(doc))


# --- Javadoc: a class page ---------------------------------------------------------------------


def _member(name: str, signature: str, text: str) -> str:
    return f"""<li><section class="detail" id="{name}(int)"><h3>{name}</h3>
<div class="member-signature"><span class="modifiers">public</span>&nbsp;<span
class="return-type">boolean</span>&nbsp;<span class="element-name">{name}</span><wbr><span
class="parameters">({signature})</span></div>
<div class="block">{text} as if by calling <a href="#insert(int)"><code>insert(int)</code></a>
first. {PROSE}</div>
<dl class="notes"><dt>Parameters:</dt><dd><code>index</code> - where it goes</dd></dl>
</section></li>"""


JAVADOC = f"""<!DOCTYPE html><html lang="en"><head><title>Widget (Frob API)</title></head>
<body class="class-declaration-page"><div class="flex-box"><header role="banner"
class="flex-header"><nav role="navigation"><div class="top-nav" id="navbar-top"><ul
class="nav-list"><li><a href="package-summary.html">Package</a></li><li class="nav-bar-cell1-rev">
Class</li></ul></div></nav></header>
<div class="flex-content"><main role="main"><div class="header">
<div class="sub-title"><span class="package-label-in-type">Package</span>&nbsp;<a
href="package-summary.html">org.frob</a></div>
<h1 title="Class Widget" class="title">Class Widget</h1></div>
<section class="class-description" id="class-description"><div class="block">{PROSE * 2}</div>
</section>
<section class="details"><ul class="details-list"><li><section class="method-details"
id="method-detail"><h2>Method Details</h2><ul class="member-list">
{_member("add", "int&nbsp;index", "Adds the widget at <code>index</code>,")}
{_member("remove", "List&lt;? extends E&gt;&nbsp;items", "Removes the widgets,")}
</ul></section></li></ul></section></main></div></div></body></html>"""


def test_javadoc_member_details_in_list_items_are_sections_with_signatures():
    doc = html(JAVADOC)
    # The page's title (its h1, as the page's metadata gives it) above the package line.
    assert headings(doc.text) == [
        "# Class Widget",
        "# Class Widget",
        "## Method Details",
        "### add",
        "### remove",
    ]
    assert "### add\n\n```\npublic boolean add(int index)\n```" in doc.text.replace("\xa0", " ")
    assert "```\npublic boolean remove(List<? extends E> items)\n```" in doc.text.replace(
        "\xa0", " "
    )
    # The description's words before its first link are kept.
    assert "Adds the widget at `index`, as if by calling `insert(int)` first." in flat(doc.text)
    assert_no_escape(doc.text)
    spans = chunks(doc)
    # The package line before the class's own h1 is under the page's title.
    assert spans[0].heading_path == ("Class Widget",)
    assert "Package org.frob" in spans[0].text
    assert all(span.heading_path for span in spans)
    assert any(span.heading_path == ("Class Widget", "Method Details", "add") for span in spans)
    for span in spans:
        assert not all(line.startswith("#") for line in span.text.splitlines() if line.strip())


# --- Sphinx, classic theme: section divs and no article frame ----------------------------------

SPHINX_CLASSIC = f"""<!DOCTYPE html><html><head><title>Registries | Frob docs</title></head>
<body><div class="document"><div id="hd"><h1><a href="../index.html">Frob 3.2 documentation</a>
</h1></div><div id="bd"><div class="yui-b"><div class="yui-g" id="ref-registries">
<div class="section" id="s-registries"><span id="registries"></span>
<h1>Registries<a class="headerlink" href="#registries" title="Permalink">¶</a></h1>
<p>{PROSE * 2}</p>
<div class="section" id="s-configuring"><h2>Configuring <code class="docutils literal"><span
class="pre">REGISTRY</span></code><a class="headerlink" href="#configuring">¶</a></h2>
<p>{PROSE * 2} Set <code class="docutils literal"><span class="pre">__all__</span></code> and
<code class="docutils literal"><span class="pre">a\\_b</span></code>; in prose, snake_case and
2*3*4 stay as written, and so does the path C:\\frob\\bin.</p>
<div class="highlight-default notranslate"><div class="highlight"><pre><span></span><span
class="c1"># First call; fetched from the database.</span>
<span class="n">site</span> <span class="o">=</span> <span class="n">get</span><span class="p">(</span><span class="s2">"a\\n"</span><span class="p">)</span>
</pre></div></div>
<p>1. A numbered line of prose.</p>
</div></div></div></div></div></div></body></html>"""


def test_sphinx_classic_theme_sections_keep_their_headings_and_code():
    doc = html(SPHINX_CLASSIC)
    assert headings(doc.text)[-2:] == ["# Registries", "## Configuring `REGISTRY`"]
    assert '```\n# First call; fetched from the database.\nsite = get("a\\n")\n```' in doc.text
    assert "`__all__` and `a\\_b`; in prose, snake_case and 2*3*4 stay" in flat(doc.text)
    assert "the path C:\\frob\\bin." in doc.text
    assert "1. A numbered line of prose." in doc.text
    assert_no_escape(doc.text.replace("`a\\_b`", ""))
    spans = chunks(doc)
    assert all(span.heading_path for span in spans)
    assert any(span.heading_path == ("Registries", "Configuring `REGISTRY`") for span in spans)
    for span in spans:
        assert not all(line.startswith("#") for line in span.text.splitlines() if line.strip())


# --- Near misses --------------------------------------------------------------------------------


def test_a_page_of_one_heading_keeps_its_title_as_its_text():
    doc = html("<html><head><title>Frob</title></head><body><h1>Widgets</h1></body></html>")
    assert "Widgets" in doc.text
    spans = chunks(doc)
    assert len(spans) == 1 and "Widgets" in spans[0].text and spans[0].heading_path


def test_a_page_without_headings_is_under_its_title():
    doc = html(
        f"<html><head><title>Release notes</title></head><body><p>{PROSE * 3}</p></body></html>"
    )
    assert doc.text.startswith("# Release notes\n\nThis paragraph")
    assert all(span.heading_path == ("Release notes",) for span in chunks(doc, 40))


def test_a_heading_inside_a_table_cell_stays_in_its_row():
    doc = html(
        f"""<html><head><title>Frob</title></head><body><article><h1>Frob</h1><p>{PROSE}</p>
        <table><tr><th>Name</th><th>Kind</th></tr><tr><td><h4>widget</h4></td><td>part</td></tr>
        </table><p>{PROSE}</p></article></body></html>"""
    )
    assert "#### widget" not in doc.text
    assert "widget" in doc.text


def test_a_site_s_name_in_a_page_header_is_not_taken_for_the_page_s_heading():
    # The header's h1 is the site's name, with a tagline and a menu: the page's text starts
    # under the document's title, with neither.
    doc = html(
        f"""<html><head><title>Widgets in winter - Frob Blog</title></head><body>
        <div id="header"><h1>Frob Blog</h1><p>Notes on frobbing, weekly.</p><ul>
        <li><a href="/">Home</a></li><li><a href="/about">About</a></li></ul></div>
        <div id="content"><div class="post"><h2>Widgets in winter</h2><p>{PROSE * 3}</p>
        </div></div></body></html>"""
    )
    assert doc.text.startswith(f"# {doc.title}\n\n## Widgets in winter\n\nThis paragraph")
    assert "weekly" not in doc.text and "About" not in doc.text
