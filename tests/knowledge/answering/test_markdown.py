"""The answer's Markdown rendered for the browser: hostile input comes out inert (no
script, no event handler, no javascript: or data: link, no image), citations become links
only when the answer's checked citations hold their number, and code keeps "[1]" literal;
the answer's JSON carries the rendering (`answer_html`)."""

from __future__ import annotations

import re

import pytest

from knowledge.answering.markdown import render_answer
from knowledge.answering.payload import answer_payload
from knowledge.answering.types import Answer, Citation


def tags_in(html: str) -> set[str]:
    return {name.lower() for name in re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", html)}


def test_plain_markdown_keeps_its_emphasis_lists_quotes_and_code():
    html = render_answer(
        "**Bold** and *em*, nested ***both*** and `code`.\n\n- one\n- two\n\n> quoted\n\n"
        "```\nblock\n```",
        set(),
    )
    assert "<strong>Bold</strong>" in html
    assert "<em>em</em>" in html
    assert "<em><strong>both</strong></em>" in html
    assert "<code>code</code>" in html
    assert "<ul>\n<li>one</li>" in html
    assert "<blockquote>" in html
    assert "<pre><code>block\n</code></pre>" in html


def test_raw_html_in_the_answer_is_shown_as_text():
    html = render_answer(
        'Look <script>alert(1)</script> and <img src=x onerror="alert(2)"> '
        '<a href="javascript:alert(3)">x</a> <iframe src="//evil"></iframe>',
        set(),
    )
    assert tags_in(html) == {"p"}
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=" in html
    assert "&lt;iframe" in html


@pytest.mark.parametrize(
    "link",
    [
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "[click](data:text/html;base64,PHNjcmlwdD4=)",
        "[click](vbscript:msgbox)",
        "[click](/admin/)",
        "<javascript:alert(1)>",
        "[click][ref]\n\n[ref]: javascript:alert(1)",
    ],
)
def test_links_other_than_http_https_and_mailto_are_not_links(link):
    html = render_answer(link, set())
    assert "<a" not in html
    assert "href" not in html


def test_http_and_mailto_links_stay_links_that_share_nothing():
    html = render_answer("[docs](https://example.org/a?b=1&c=2) <mailto:ops@example.org>", set())
    assert '<a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">' in html
    assert '<a href="mailto:ops@example.org" rel="noopener noreferrer nofollow">' in html


def test_images_are_never_rendered():
    html = render_answer(
        "![pixel](https://tracker.example/p.png) ![x](data:image/png;base64,AA)", set()
    )
    assert "<img" not in html
    assert 'href="data:' not in html


def test_html_entities_stay_escaped_text():
    html = render_answer("&lt;script&gt; &#x3C;img src=x onerror=alert(1)&#x3E; &amp;", set())
    assert tags_in(html) == {"p"}
    assert "&lt;script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_headings_start_below_the_page_s_own():
    html = render_answer("# Title\n\n## Part\n\n###### Small", set())
    assert "<h3>Title</h3>" in html and "<h4>Part</h4>" in html and "<h6>Small</h6>" in html
    assert not {"h1", "h2"} & tags_in(html)


def test_valid_citations_become_links_to_their_passage():
    html = render_answer("Crane 7 was repaired in March [1]. It failed [2, 3].", {1, 2, 3})
    for n in (1, 2, 3):
        assert f'<a class="cite" href="#passage-{n}" data-n="{n}"' in html
        assert f">[{n}]</a>" in html


def test_an_invalid_citation_stays_plain_text():
    html = render_answer("True [1]. Invented [9]. Mixed [1, 9].", {1})
    assert html.count('class="cite"') == 2
    assert "#passage-9" not in html
    assert "Invented [9]." in html
    assert ">[1]</a>[9]." in html


def test_a_citation_inside_code_or_a_link_label_stays_literal():
    html = render_answer(
        "Write `[1]` like this:\n\n```\nlist[1]\n```\n\n[see [1]](https://e.org)", {1}
    )
    assert 'class="cite"' not in html
    assert "<code>[1]</code>" in html
    assert "list[1]" in html


def test_a_fake_citation_anchor_written_by_the_model_is_text():
    html = render_answer(
        '<a class="cite" href="#passage-9" data-n="9">[9]</a> [9](#passage-9)', {1}
    )
    assert "<a" not in html
    assert "&lt;a class=" in html


def test_an_answer_without_citations_renders_without_links():
    assert render_answer("The documents do not say.", set()) == "<p>The documents do not say.</p>"


def citation(n: int) -> Citation:
    return Citation(
        n=n,
        chunk_id=10 + n,
        document_id=5,
        document_title="log",
        source_id=2,
        char_start=0,
        char_end=10,
    )


def test_the_answer_payload_carries_the_rendered_answer_with_only_its_citations_linked():
    answer = Answer(
        question="who?",
        mode="local",
        llm_configured=True,
        answered=True,
        answer="Marta *did* [1]. <script>x</script> [2]",
        citations=[citation(1)],
    )
    payload = answer_payload(answer)
    assert payload["answer"] == "Marta *did* [1]. <script>x</script> [2]"
    assert payload["answer_html"] == (
        '<p>Marta <em>did</em> <a class="cite" href="#passage-1" data-n="1" '
        'rel="noopener noreferrer nofollow">[1]</a>. &lt;script&gt;x&lt;/script&gt; [2]</p>'
    )


def test_without_an_answer_there_is_no_rendered_answer():
    answer = Answer(question="who?", mode="local", llm_configured=False)
    assert answer_payload(answer)["answer_html"] is None
