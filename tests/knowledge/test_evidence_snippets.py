"""Evidence snippets (knowledge/selectors/entities.py): the text around a mention, as the
entity panel, the review page and the API show it, stops at whole words."""

from __future__ import annotations

from ingest.models import Chunk
from knowledge.selectors.entities import SNIPPET_CONTEXT, _snippet

TEXT = (
    "If Python came with your operating system, removing it is not recommended. If you "
    "remove it, whatever tools were written in Python will no longer run, and some of "
    "them might be important to you. Reinstalling the whole system would then be required."
)


def test_the_context_around_a_mention_stops_at_whole_words():
    chunk = Chunk(char_start=1000, text=TEXT)  # never saved: the text alone is read
    start = 1000 + TEXT.index("Python will")
    for context in range(20, SNIPPET_CONTEXT):
        snippet, offset = _snippet(chunk, start, start + len("Python"), context=context)
        assert TEXT[offset - 1000 :].startswith(snippet)
        assert "Python will" in snippet
        before = TEXT[offset - 1000 - 1 : offset - 1000]
        after = TEXT[offset - 1000 + len(snippet) : offset - 1000 + len(snippet) + 1]
        assert not (before.isalnum() and snippet[0].isalnum()), (context, snippet)
        assert not (after.isalnum() and snippet[-1].isalnum()), (context, snippet)


def test_a_mention_inside_a_longer_word_keeps_its_own_letters():
    chunk = Chunk(char_start=0, text="see xxPythonyy and more words here")
    snippet, offset = _snippet(chunk, 6, 12, context=3)
    assert snippet[6 - offset : 12 - offset] == "Python"
