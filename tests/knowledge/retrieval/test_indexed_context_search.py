"""A chunk that never names what its page is about is found by that name: the keyword and
the vector signal read the chunk under its document's title and heading path
(ingest/indexed_text.py), while the text a hit shows stays the chunk's own."""

from __future__ import annotations

import pytest

from ingest.actions.sources import do_add_file, do_create_source, do_start_source
from ingest.embeddings import get_embedder
from ingest.models import Chunk, Source
from knowledge.retrieval import hybrid_search
from knowledge.retrieval.signals.keyword import keyword_signal
from knowledge.retrieval.signals.vector import vector_signals
from knowledge.retrieval.types import QueryVector
from tests.support import run_pending

pytestmark = pytest.mark.django_db

# Reference pages of four commands: each description says what the command does and never
# its name, and no name means anything near what its command does.
COMMANDS = {
    "lighthouse": "Prints every line of the named files that matches one of the given patterns.",
    "orchard": "Sorts the lines of its input by the keys given and writes them out in order.",
    "glacier": "Copies files and directories to a destination, keeping their modes if asked.",
    "violin": "Counts the lines, words and bytes of each file and prints a total at the end.",
}


def reference_page(name: str, description: str) -> bytes:
    return f"# {name}\n\n## Synopsis\n\n{name} [OPTION]... FILE...\n\n## Description\n\n{description}\n".encode()


@pytest.fixture
def manual(alice) -> Source:
    source = do_create_source(workspace=alice.workspace, kind="upload", name="manual")
    for name, description in COMMANDS.items():
        do_add_file(source=source, path=f"{name}.md", chunks=[reference_page(name, description)])
    do_start_source(source=source, enqueue=False)
    run_pending(source)
    return source


def description(name: str) -> Chunk:
    return Chunk.objects.get(document__path=f"{name}.md", text__contains=COMMANDS[name])


def test_a_description_that_never_names_its_command_is_found_by_the_name(alice, manual):
    embedder = get_embedder()
    for name in COMMANDS:
        chunk = description(name)
        assert name not in chunk.text  # what a hit shows: the chunk's own text
        keyword = [pk for pk, _ in keyword_signal(alice.workspace.pk, name, 50, None)]
        assert chunk.pk in keyword, name
        query = QueryVector(model=embedder.model_id, values=embedder.encode([name])[0])
        vector, _ = vector_signals(alice.workspace.pk, query, 50, None, None)
        ranked = [pk for pk, _ in vector]
        others = set(
            Chunk.objects.filter(document__source=manual)
            .exclude(document__path=f"{name}.md")
            .values_list("pk", flat=True)
        )
        # Above every chunk of the other commands' pages.
        assert ranked.index(chunk.pk) < min(ranked.index(pk) for pk in others), name


def test_a_search_hit_shows_the_chunk_text_without_its_context(alice, manual):
    result = hybrid_search(workspace=alice.workspace, query="glacier", limit=10)
    hit = next(c for c in result.chunks if COMMANDS["glacier"] in c.text)
    assert hit.text == description("glacier").text
    assert not hit.text.startswith("glacier")
