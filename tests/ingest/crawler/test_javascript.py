"""Which fetched pages seem to need JavaScript (ingest/crawler/javascript.py), on shells
shaped like the ones the common frameworks serve and on ordinary pages: no database."""

from __future__ import annotations

import pytest

from ingest.crawler.javascript import is_html, javascript_verdict

LIMITS = {"min_page_bytes": 4096, "max_text_chars": 200}
BUNDLE = "".join(f"var chunk{i}=function(){{return {i}}};" for i in range(400))

CREATE_REACT_APP = """<!doctype html><html lang="en"><head><meta charset="utf-8"/>
<link rel="icon" href="/favicon.ico"/><meta name="viewport" content="width=device-width"/>
<title>Harbour Tides</title><script defer="defer" src="/static/js/main.4f1a9c2e.js"></script>
<link href="/static/css/main.073c9b0a.css" rel="stylesheet"></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div></body></html>"""

NEXT_SHELL = """<!DOCTYPE html><html><head><meta charSet="utf-8"/><title>Docs</title>
<script src="/_next/static/chunks/webpack-8fa1640cc84ba8fe.js" defer=""></script>
<script src="/_next/static/chunks/main-app-1ae6d9c4e6f6b2a3.js" defer=""></script></head>
<body><div id="__next"></div>
<script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{}},"page":"/"}</script>
</body></html>"""

NUXT_SHELL = """<!DOCTYPE html><html><head><title>Fleet</title>
<link rel="modulepreload" href="/_nuxt/entry.6a1b.js"></head>
<body><div id="__nuxt"><!-- rendered on the client --></div>
<script type="module" src="/_nuxt/entry.6a1b.js"></script></body></html>"""

# No mount point anyone names, but the whole page is an inline bundle and two words.
BIG_AND_EMPTY = (
    "<html><head><title>App</title></head><body><p>Loading…</p>"
    f"<script>{BUNDLE}</script></body></html>"
)

ASKS_FOR_JAVASCRIPT = """<html><head><title>Portal</title><script src="/app.js"></script></head>
<body><noscript><p>Please enable JavaScript in your browser to use the portal.</p></noscript>
<main id="portal-main"></main></body></html>"""

SHORT_REAL_PAGE = """<!DOCTYPE html><html><head><title>Contact</title></head><body>
<h1>Contact</h1><p>Harbour office: 12 Quay Street, open 8:00 to 16:00. Call 0123 456 789.</p>
</body></html>"""

ARTICLE = (
    "<html><head><title>Tides</title><script src='/analytics.js'></script></head><body>"
    "<div id='app'><article><h1>Tides</h1>"
    + "".join(
        f"<p>The tide at the harbour rose {i} centimetres above the mean on day {i}, "
        "as the harbour master recorded in the ledger.</p>"
        for i in range(40)
    )
    + "</article></div><noscript>Enable JavaScript for comments.</noscript></body></html>"
)

# Server-rendered single-page app: the mount point holds the text.
NEXT_SERVER_RENDERED = NEXT_SHELL.replace(
    '<div id="__next"></div>',
    '<div id="__next"><main><h1>Lighthouse keepers</h1><p>'
    + "The keepers of the north light kept a log of every ship that passed, "
    "every storm and every repair to the lamp, from 1872 until the light was automated. "
    + "</p></main></div>",
)

# A widget's empty mount point on an ordinary page.
EMPTY_WIDGET_ON_ARTICLE = ARTICLE.replace("<div id='app'>", "<div id='root'></div><div>")


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        (CREATE_REACT_APP, "single-page-app shell: empty #root"),
        (NEXT_SHELL, "single-page-app shell: empty #__next"),
        (NUXT_SHELL, "single-page-app shell: empty #__nuxt"),
        (ASKS_FOR_JAVASCRIPT, "asks to enable JavaScript"),
        (BIG_AND_EMPTY, "bytes of page but only"),
    ],
    ids=["create-react-app", "next", "nuxt", "noscript", "large-and-empty"],
)
def test_single_page_app_shells_and_empty_large_pages_are_flagged(page, reason):
    verdict = javascript_verdict(page.encode(), **LIMITS)
    assert verdict.needs_javascript
    assert reason in verdict.reason
    assert verdict.text_chars < LIMITS["max_text_chars"]


@pytest.mark.parametrize(
    "page",
    [SHORT_REAL_PAGE, ARTICLE, NEXT_SERVER_RENDERED, EMPTY_WIDGET_ON_ARTICLE],
    ids=["short-real-page", "article", "server-rendered-next", "widget-mount-on-article"],
)
def test_ordinary_pages_are_not_flagged(page):
    verdict = javascript_verdict(page.encode(), **LIMITS)
    assert not verdict.needs_javascript, verdict.reason
    assert verdict.reason == ""


def test_a_short_page_is_flagged_by_size_only_past_the_threshold():
    tiny = "<html><body><p>Loading</p><script>" + "x=1;" * 300 + "</script></body></html>"
    assert not javascript_verdict(tiny, **LIMITS).needs_javascript  # about 1.2 kB
    assert javascript_verdict(tiny, min_page_bytes=1000, max_text_chars=200).needs_javascript


def test_visible_text_leaves_out_scripts_styles_and_the_head():
    page = (
        "<html><head><title>A very long title that is not body text at all</title>"
        "<style>body{color:red}</style></head><body><script>var a='hidden text';</script>"
        "<p>Seen  words</p></body></html>"
    )
    assert javascript_verdict(page, **LIMITS).text_chars == len("Seen words")


def test_broken_markup_is_judged_on_what_was_read():
    verdict = javascript_verdict(b'<html><body><div id="root"><script src="/a.js">', **LIMITS)
    assert verdict.needs_javascript
    assert javascript_verdict(b"\xff\xfe<<<>>>", **LIMITS).needs_javascript is False


def test_only_html_is_judged():
    assert is_html("text/html; charset=utf-8")
    assert is_html("application/xhtml+xml")
    assert not is_html("application/pdf")
    assert not is_html("text/plain")
