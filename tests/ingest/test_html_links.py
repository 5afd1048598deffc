"""A page's navigation never becomes a link of its content.

Small hand-made pages in the shapes of several generators' output (DocBook XSL and
Publican, AsciiDoc, Sphinx, mdBook, Javadoc): each page's navigation bars, tables of
contents and breadcrumbs are left out, and each keeps the content link beside them (the
near miss: a link in a paragraph, or in a box the generator names with a navigation word
but that holds prose).
"""

from __future__ import annotations

import lxml.html  # type: ignore[import-untyped]

from ingest.parsers.html_links import site_links

PROSE = (
    "This paragraph explains the feature in ordinary prose, long enough for a reader to see "
    "it as the main content of the page rather than a menu of links."
)


def texts(page: str) -> list[str]:
    root = lxml.html.document_fromstring(page)
    return [link["text"] for link in site_links(root, root.text_content())]


def test_docbook_navigation_bars_and_table_of_contents_are_not_content_links():
    page = f"""<html><head><title>CREATE WIDGET</title></head><body>
    <div class="navheader"><table><tr><th colspan="3">CREATE WIDGET</th></tr><tr>
      <td><a accesskey="p" href="sql-createview.html">Prev</a></td>
      <td><a accesskey="u" href="sql-commands.html">Widget Commands</a></td>
      <td><a accesskey="n" href="sql-drop.html">Next</a></td></tr></table></div>
    <div class="refentry"><div class="toc"><dl class="toc">
      <dt><a href="#synopsis">Synopsis</a></dt><dt><a href="#notes">Notes</a></dt></dl></div>
    <p>{PROSE} See <a href="sql-alterwidget.html">ALTER WIDGET</a> to change one.</p>
    <div class="sidebar"><p class="title">Compatibility</p><p>{PROSE} The
      <a href="widget-storage.html">widget storage</a> chapter says more.</p></div></div>
    <div class="navfooter"><table><tr>
      <td><a accesskey="p" href="sql-createview.html">CREATE VIEW</a></td>
      <td><a accesskey="h" href="index.html">Home</a></td>
      <td><a href="sql-drop.html">DROP WIDGET</a></td></tr></table></div>
    </body></html>"""

    found = texts(page)

    assert "ALTER WIDGET" in found
    assert "widget storage" in found  # DocBook's "sidebar" is a box of prose, not a menu
    for navigation in ("Widget Commands", "Synopsis", "Notes", "CREATE VIEW", "DROP WIDGET"):
        assert navigation not in found


def test_publican_docnav_and_banner_are_not_content_links():
    page = f"""<html><body><div id="banner"><a href="get.html">Get the book</a></div>
    <div class="section"><h2>6.3. The frob Command</h2>
    <p>{PROSE} Read <a href="sect.config.html">the configuration section</a> first.</p></div>
    <ul class="docnav"><li class="previous"><a href="sect.apt-get.html">6.2. Fetching</a></li>
      <li class="up"><a href="#">Up</a></li>
      <li class="next"><a href="sect.apt-file.html">6.4. Filing</a></li></ul></body></html>"""

    found = texts(page)

    assert found == ["the configuration section"]


def test_asciidoc_table_of_contents_and_footer_are_not_content_links():
    page = f"""<html><body><div id="header"><h1>frob(1) Manual Page</h1>
      <div id="toc"><div id="toctitle">Table of Contents</div>
        <div class="toclevel1"><a href="#_synopsis">SYNOPSIS</a></div>
        <div class="toclevel1"><a href="#_options">OPTIONS</a></div></div></div>
    <div id="content"><div class="sect1"><h2 id="_description">DESCRIPTION</h2>
      <div class="paragraph"><p>{PROSE} See <a href="frob-config.html">frob-config(1)</a>.</p>
    </div></div></div>
    <div id="footer"><div id="footer-text"><a href="index.html">Last updated</a></div></div>
    </body></html>"""

    found = texts(page)

    assert found == ["frob-config(1)"]


def test_sphinx_related_bar_sidebar_and_toctree_are_not_content_links():
    page = f"""<html><body>
    <div class="related"><ul><li><a href="genindex.html">General Index</a></li>
      <li><a href="tools.html">Tools</a> »</li></ul></div>
    <div class="document"><div class="body">
      <section><h1>pkg.tools</h1><p>{PROSE} Use <a href="gadgets.html">pkg.gadgets</a>.</p>
      <div class="toctree-wrapper compound"><ul>
        <li class="toctree-l1"><a href="tools-intro.html">Introduction to tools</a></li></ul>
      </div></section></div></div>
    <div class="sphinxsidebar"><h3>Previous topic</h3><p><a href="widgets.html">Widgets</a></p>
    </div></body></html>"""

    found = texts(page)

    assert found == ["pkg.gadgets"]


def test_mdbook_prev_next_links_are_not_content_links():
    page = f"""<html><body><nav id="sidebar" class="sidebar"><ol class="chapter">
      <li><a href="ch01.html">Getting Started</a></li></ol></nav>
    <div id="content" class="content"><main><h1>Ownership</h1>
      <p>{PROSE} See <a href="ch03-02.html">“Data Types”</a> for more.</p>
      <a rel="prev" href="ch03.html">Common Concepts</a>
      <a rel="next prefetch" href="ch04-02.html">References and Borrowing</a>
    </main></div></body></html>"""

    found = texts(page)

    assert found == ["“Data Types”"]


def test_javadoc_breadcrumbs_in_the_main_part_are_not_content_links():
    page = f"""<html><body><header role="banner"><nav role="navigation">
      <a href="overview-summary.html">Overview</a></nav></header>
    <main role="main"><div class="sub-nav"><a href="package-summary.html">Package</a>
      <a href="package-tree.html">Tree</a></div>
      <h1>Class Gizmo</h1><div class="block">{PROSE} Compare
      <a href="Widget.html">Widget</a>.</div></main></body></html>"""

    found = texts(page)

    assert found == ["Widget"]
