"""Extraction through the real pipeline against a real local chat-completions server."""

from __future__ import annotations

import shutil

import pytest

from ingest.actions.sources import (
    do_delete_source,
    do_reingest_source,
    do_retry_source,
    do_set_source_options,
)
from ingest.models import Chunk, Document, DocumentStatus
from knowledge import prompts
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.actions.extraction.estimate import estimate_source
from knowledge.extraction.extractors import reset_extractor
from knowledge.models import (
    Entity,
    EntityType,
    ExtractionRun,
    ExtractionStatus,
    LlmCall,
    Mention,
    Relation,
    RelationEvidence,
    RelationType,
    SourceExtraction,
    TypeStatus,
)
from tests.knowledge.conftest import World, is_glean, window_text
from tests.llm_server import DONE, Reply

PARAGRAPH = (
    "Ada Lovelace worked with Charles Babbage on the Analytical Engine. "
    "Babbage designed the engine in London."
)
TUPLES = "\n".join(
    [
        '("entity"<|>Ada Lovelace<|>person<|>Mathematician who wrote programs for the engine.)',
        '("entity"<|>Charles Babbage<|>person<|>Designer of the Analytical Engine.)',
        '("entity"<|>Analytical Engine<|>product<|>A mechanical computer.)',
        '("entity"<|>London<|>location<|>City where the engine was designed.)',
        '("relationship"<|>Analytical Engine<|>Charles Babbage<|>created_by'
        "<|>Babbage designed it.<|>design, engine<|>9)",
        '("relationship"<|>Ada Lovelace<|>Charles Babbage<|>related_to'
        "<|>They worked together.<|>collaboration<|>7)",
        "<|COMPLETE|>",
    ]
)


def names(workspace) -> dict[str, str]:
    return {
        e.name: e.type.name for e in Entity.objects.for_workspace(workspace).select_related("type")
    }


def edges(workspace) -> set[tuple[str, str, str]]:
    return {
        (r.source.name, r.target.name, r.type.name)
        for r in Relation.objects.for_workspace(workspace).select_related(
            "source", "target", "type"
        )
    }


def long_text(paragraphs: int) -> str:
    """Distinct paragraphs, enough for several extraction windows."""
    return "\n\n".join(
        f"Paragraph {i}: Station {i} of the survey lies near Ridge {i}. "
        + " ".join(f"Observation {i}.{j} recorded stable readings at the site." for j in range(12))
        for i in range(paragraphs)
    )


def test_tuple_output_becomes_entities_relations_and_evidence_at_exact_spans(
    llm, ingest_text, alice
):
    llm.script(TUPLES, DONE)
    source = ingest_text(PARAGRAPH)

    assert source.status == "done"
    assert names(alice.workspace) == {
        "Ada Lovelace": "person",
        "Charles Babbage": "person",
        "Analytical Engine": "product",
        "London": "location",
    }
    assert edges(alice.workspace) == {
        ("Analytical Engine", "Charles Babbage", "created_by"),
        ("Ada Lovelace", "Charles Babbage", "related_to"),
    }
    document = Document.objects.get(source=source)
    for mention in Mention.objects.filter(entity__workspace=alice.workspace):
        assert mention.char_start is not None
        assert document.text[mention.char_start : mention.char_end] == mention.surface_form
        chunk = mention.chunk
        assert chunk.char_start <= mention.char_start < chunk.char_end
    engine = Entity.objects.get(name="Analytical Engine")
    # "Analytical Engine" occurs once; "the engine" is not a whole-name occurrence.
    assert engine.mention_count == 1
    assert engine.description == "A mechanical computer."
    created_by = RelationEvidence.objects.get(relation__type__name="created_by")
    assert created_by.strength == 9
    assert created_by.keywords == ["design", "engine"]
    assert document.text[created_by.char_start : created_by.char_end].startswith("Ada Lovelace")
    relation = created_by.relation
    assert relation.weight == pytest.approx(0.9)
    assert relation.evidence_count == 1

    first = llm.chat_requests[0].body
    assert first["model"] == "scripted-model"
    assert first["temperature"] == 0.0
    assert "person: A real or fictional individual human." in first["messages"][1]["content"]
    assert PARAGRAPH in window_text(first)
    assert llm.chat_requests[0].headers["authorization"] == "Bearer sk-test-secret"

    account = SourceExtraction.objects.get(source=source)
    assert account.extractor == "llm"
    assert account.calls == 2
    calls = LlmCall.objects.filter(source=source)
    assert sorted(c.purpose for c in calls) == ["extract", "glean"]
    assert account.prompt_tokens == sum(c.prompt_tokens for c in calls) > 0
    assert account.completion_tokens == sum(c.completion_tokens for c in calls) > 0


def test_a_description_says_what_an_entity_is_before_its_version_notes(llm, ingest_text):
    """The first mention of a manual's API is often in a note ("Changed in version 3.10:
    …"); the entity's description puts the statements first, the notes after."""
    notes = (
        "Changed in version 3.10: Removed the loop parameter.",
        "Availability: Unix, not Emscripten.",
    )
    for n, note in enumerate(notes):
        llm.script(f'("entity"<|>asyncio.Queue<|>technology<|>{note})\n<|COMPLETE|>', DONE)
        ingest_text(f"Note {n}: asyncio.Queue lost a parameter.", title=f"note {n}")
    llm.script('("entity"<|>asyncio.Queue<|>technology<|>A first in, first out queue.)', DONE)
    ingest_text("asyncio.Queue is a queue.", title="definition")

    queue = Entity.objects.get(name="asyncio.Queue")
    assert queue.description == " ".join(("A first in, first out queue.", *notes))


def test_an_entity_a_definition_describes_is_described_by_it_alone(ingest_text):
    """Offline extractor, Python manual: graphlib's overview named `get_ready()` in
    sentences before its entry defined it ("Returns a tuple with all the nodes that are
    ready."), and its description was the overview's sentences. A definition now comes
    first, whichever document or window it is in, and alone."""
    ingest_text(
        "Call `Sorter.get_ready()` in a loop; it returns nodes even when a cycle is found.",
        title="overview",
    )
    ingest_text(
        "`Sorter.get_ready()`\n: Returns a tuple with all the nodes that are ready.\n",
        title="reference",
    )

    entity = Entity.objects.get(name="Sorter.get_ready")
    assert entity.description == "Returns a tuple with all the nodes that are ready."
    assert [m.defines for m in entity.mentions.exclude(description="").order_by("pk")] == [
        False,
        True,
    ]


def test_a_description_does_not_repeat_a_statement_cut_short(llm, ingest_text):
    whole = "The encoding is passed to io.TextIOWrapper for compressed files."
    for n, said in enumerate(("The encoding is passed to io.TextIOWrapper", whole)):
        llm.script(f'("entity"<|>io.TextIOWrapper<|>technology<|>{said})\n<|COMPLETE|>', DONE)
        ingest_text(f"Part {n}: io.TextIOWrapper wraps a stream.", title=f"part {n}")

    assert Entity.objects.get(name="io.TextIOWrapper").description == whole


def test_json_output_is_accepted_as_a_fallback(llm, ingest_text, alice):
    llm.script(
        "Sure! Here is the JSON you asked for:\n```json\n"
        '{"entities": [{"name": "Ada Lovelace", "type": "person", "description": "x"},'
        ' {"name": "Charles Babbage", "type": "person"}],'
        ' "relationships": [{"source": "Ada Lovelace", "target": "Charles Babbage",'
        ' "type": "related_to", "keywords": ["work"], "strength": 6}]}\n```',
        DONE,
    )
    ingest_text(PARAGRAPH)

    assert names(alice.workspace) == {"Ada Lovelace": "person", "Charles Babbage": "person"}
    assert edges(alice.workspace) == {("Ada Lovelace", "Charles Babbage", "related_to")}
    run = ExtractionRun.objects.get()
    assert run.counts["json_fallback"] == 1


def test_gleaning_adds_missed_items_and_stops_when_the_model_says_done(
    llm, ingest_text, alice, settings
):
    settings.EXTRACTION_GLEANING_PASSES = 3
    reset_extractor()
    llm.script(
        '("entity"<|>Ada Lovelace<|>person<|>Mathematician.)',
        '("entity"<|>Charles Babbage<|>person<|>Engineer.)\n'
        '("relationship"<|>Ada Lovelace<|>Charles Babbage<|>related_to<|>Colleagues.<|>work<|>6)',
        DONE,
    )
    ingest_text(PARAGRAPH)

    requests = llm.chat_requests
    assert len(requests) == 3  # extract, glean (adds two), glean (DONE): the third pass unused
    second = requests[1].body["messages"]
    assert second[2] == {
        "role": "assistant",
        "content": '("entity"<|>Ada Lovelace<|>person<|>Mathematician.)',
    }
    assert second[3]["content"] == prompts.load_prompts("v1").glean
    assert len(requests[2].body["messages"]) == 6
    assert names(alice.workspace) == {"Ada Lovelace": "person", "Charles Babbage": "person"}
    run = ExtractionRun.objects.get()
    assert run.passes == 3
    assert run.counts["gleaning_added"] == 2
    assert run.counts["gleaning_stopped_early"] == 1
    assert len(run.raw_output) == 3


def test_gleaning_stops_when_a_turn_adds_nothing_new(llm, ingest_text, settings):
    settings.EXTRACTION_GLEANING_PASSES = 2
    reset_extractor()
    same = '("entity"<|>Ada Lovelace<|>person<|>Mathematician.)'
    llm.script(same, same)
    ingest_text(PARAGRAPH)
    assert len(llm.chat_requests) == 2


def test_malformed_output_of_every_kind_is_tolerated_counted_and_kept(llm, ingest_text, alice):
    reply = "\n".join(
        [
            "Here are the entities I found in the text:",
            "```",
            '("entity"<|>Ada Lovelace<|>person<|>Mathematician.)',
            '("entity" | "Charles Babbage" | "person" | "Engineer.")',
            "entity<|>London<|>location<|>City.",
            '("entity"<|>\u200bAnalytical\u00a0Engine\ufeff<|>product<|>Machine.)',
            '("entity"<|>Broken entity without a type)',
            '("relationship"<|>Ada Lovelace)',
            '("entity"<|>https://example.com/page<|>concept<|>A URL, not a name.)',
            '("entity"<|>the first general purpose computer ever designed by anyone<|>concept<|>)',
            '("entity"<|>1. Numbered<|>concept<|>list artefact)',
            '("entity"<|>{topic}<|>concept<|>template artefact)',
            '("relationship"<|>Ada Lovelace<|>Charles Babbage<|>related_to<|>Worked together.'
            "<|>work<|>eleven)",
            "```",
            "I hope this helps!",
        ]
    )
    llm.script(reply, DONE)
    source = ingest_text(PARAGRAPH)

    assert source.status == "done"
    assert names(alice.workspace) == {
        "Ada Lovelace": "person",
        "Charles Babbage": "person",
        "London": "location",
        "Analytical Engine": "product",
    }
    assert edges(alice.workspace) == {("Ada Lovelace", "Charles Babbage", "related_to")}
    run = ExtractionRun.objects.get()
    assert run.raw_output[0] == reply
    counts = run.counts
    assert counts["fenced"] >= 1
    assert counts["prose_lines"] >= 2
    assert counts["wrong_delimiter"] >= 1
    assert counts.get("missing_fields", 0) + counts.get("malformed", 0) >= 2
    assert counts["bad_strength"] == 1
    assert counts["rejected"] == 4
    assert counts["rejected_url"] == 1
    assert counts["rejected_too_many_words"] == 1
    assert run.problems, "offending lines are kept for a person to read"
    assert RelationEvidence.objects.get().strength == 5.0  # unreadable strength: the default


def test_a_429_is_retried_after_its_retry_after_and_then_succeeds(llm, ingest_text, alice):
    llm.script(Reply(status=429, headers={"Retry-After": "0"}, content="slow down"), TUPLES, DONE)
    source = ingest_text(PARAGRAPH)

    assert source.status == "done"
    assert len(llm.chat_requests) == 3
    extract_call = LlmCall.objects.get(source=source, purpose="extract")
    assert extract_call.attempts == 2
    assert extract_call.ok
    assert "Ada Lovelace" in names(alice.workspace)


def test_a_timeout_fails_the_document_clearly_caches_nothing_and_a_retry_recovers(
    llm, ingest_text, alice, settings
):
    settings.LLM_TIMEOUT = 0.5
    settings.LLM_MAX_RETRIES = 1
    reset_extractor()
    llm.script(Reply(hang=True), Reply(hang=True))
    source = ingest_text(PARAGRAPH)

    document = Document.objects.get(source=source)
    assert document.status == DocumentStatus.FAILED
    assert document.error.startswith("Extraction failed: LLM request timed out")
    assert source.status == "failed"
    assert not ExtractionRun.objects.exists()
    account = SourceExtraction.objects.get(source=source)
    assert account.status == ExtractionStatus.FAILED
    assert LlmCall.objects.get(source=source).ok is False
    assert Chunk.objects.filter(document=document, embedding__isnull=False).exists()

    llm.script(TUPLES, DONE)
    do_retry_source(source=source, enqueue=False)
    from tests.support import run_pending

    run_pending(source)
    document.refresh_from_db()
    assert document.status == DocumentStatus.DONE
    assert "Ada Lovelace" in names(alice.workspace)


def test_a_budget_stops_extraction_mid_source_and_a_raised_budget_continues(
    llm, ingest_text, alice, settings
):
    settings.EXTRACTION_GLEANING_PASSES = 0
    settings.EXTRACTION_WINDOW_TOKENS = 300
    settings.LLM_MAX_TOKENS = 200
    settings.LLM_CONCURRENCY = 1
    reset_extractor()
    llm.responder = World(entities={"Station 1": "location", "Station 2": "location"})
    text = long_text(8)
    probe = ingest_text(text, title="probe")
    windows = ExtractionRun.objects.count()
    assert windows >= 4
    per_window = SourceExtraction.objects.get(source=probe).tokens_used // windows
    ExtractionRun.objects.all().delete()  # forget the probe's cache
    llm.clear_requests()

    budget = int(estimate_reservation(probe) * 2.5)
    # The same text again would only be the probe's duplicate (counted once, never sent).
    do_delete_source(source_id=probe.pk)
    source = ingest_text(text, title="budgeted", token_budget=budget)

    account = SourceExtraction.objects.get(source=source)
    assert account.status == ExtractionStatus.BUDGET_EXCEEDED
    assert account.tokens_used <= budget
    assert 1 <= account.windows_extracted < windows
    assert account.windows_skipped == windows - account.windows_extracted
    assert len(llm.chat_requests) == account.windows_extracted
    assert "token budget" in account.message
    assert f"--source {source.pk}" in account.message
    assert "token budget" in source.warning
    assert per_window > 0
    assert Document.objects.get(source=source).status == DocumentStatus.DONE

    do_set_source_options(source=source, options={"token_budget": 0})
    sent_before = len(llm.chat_requests)
    report = do_extract_source(source=source)
    assert report.cached == account.windows_extracted
    assert len(llm.chat_requests) - sent_before == windows - account.windows_extracted
    account.refresh_from_db()
    assert account.status == ExtractionStatus.DONE
    source.refresh_from_db()
    assert source.warning == ""


def estimate_reservation(source) -> int:
    """What one window reserves against a budget (the extractor's worst case)."""
    from knowledge.actions.extraction.runs import document_windows
    from knowledge.extraction.extractors import get_extractor
    from knowledge.selectors.schema import get_schema_snapshot

    document = Document.objects.get(source=source)
    window = document_windows(document)[0]
    return get_extractor().max_tokens_for(window.text, schema=get_schema_snapshot(source.workspace))


def test_a_new_type_the_model_proposes_is_recorded_as_proposed(llm, ingest_text, alice):
    llm.script(
        '("entity"<|>Analytical Engine<|>NEW:machine<|>A mechanical computer.)\n'
        '("entity"<|>Charles Babbage<|>person<|>Engineer.)\n'
        '("relationship"<|>Charles Babbage<|>Analytical Engine<|>NEW:designed'
        "<|>He designed it.<|>design<|>9)",
        DONE,
    )
    ingest_text(PARAGRAPH)

    machine = EntityType.objects.get(workspace=alice.workspace, name="machine")
    assert machine.status == TypeStatus.PROPOSED
    assert machine.origin == "model"
    assert machine.proposed_count == 1
    assert Entity.objects.get(name="Analytical Engine").type == machine
    designed = RelationType.objects.get(workspace=alice.workspace, name="designed")
    assert designed.status == TypeStatus.PROPOSED
    assert edges(alice.workspace) == {("Charles Babbage", "Analytical Engine", "designed")}
    # Proposed types are not offered to the model until accepted.
    llm.script(DONE)
    ingest_text("Another text about nothing in particular.", title="second")
    assert "machine" not in llm.chat_requests[-1].body["messages"][1]["content"]


def test_proposed_types_are_active_at_once_with_auto_accept(llm, ingest_text, alice, settings):
    settings.EXTRACTION_AUTO_ACCEPT_TYPES = True
    llm.script('("entity"<|>Analytical Engine<|>NEW: Machine<|>A computer.)', DONE)
    ingest_text(PARAGRAPH)
    assert EntityType.objects.get(workspace=alice.workspace, name="machine").status == "active"


def test_unknown_and_retired_types_fall_back_to_concept_and_related_to(llm, ingest_text, alice):
    llm.script(
        '("entity"<|>Ada Lovelace<|>wizard<|>Not a registry type.)\n'
        '("entity"<|>Charles Babbage<|>person<|>Engineer.)\n'
        '("relationship"<|>Ada Lovelace<|>Charles Babbage<|>befriended<|>Friends.<|>x<|>5)',
        DONE,
    )
    ingest_text(PARAGRAPH)
    assert names(alice.workspace)["Ada Lovelace"] == "concept"
    assert edges(alice.workspace) == {("Ada Lovelace", "Charles Babbage", "related_to")}
    assert not EntityType.objects.filter(name="wizard").exists()
    account = SourceExtraction.objects.get()
    assert account.counts["unknown_entity_types"] == 1
    assert account.counts["unknown_relation_types"] == 1


def test_reingesting_unchanged_content_sends_nothing_to_the_llm(llm, ingest_text, alice):
    llm.responder = World(entities={"Ada Lovelace": "person", "Charles Babbage": "person"})
    source = ingest_text(PARAGRAPH)
    sent = len(llm.chat_requests)
    assert sent == 2

    # The same text again, in another source: every window is in the cache. (Other bytes:
    # the very same bytes would make the copy a duplicate, counted once, never extracted.)
    other = ingest_text(PARAGRAPH + "\n")
    assert SourceExtraction.objects.get(source=other).windows_cached == 1
    do_reingest_source(source=source, enqueue=False)
    do_extract_source(source=source)
    do_extract_source(source=other)

    assert len(llm.chat_requests) == sent
    assert Entity.objects.get(name="Ada Lovelace").mention_count == 2
    assert Mention.objects.filter(entity__name="Ada Lovelace").count() == 2


def test_a_new_prompt_version_or_model_extracts_again(llm, ingest_text, settings, tmp_path):
    llm.responder = World(entities={"Ada Lovelace": "person"})
    source = ingest_text(PARAGRAPH)
    assert len(llm.chat_requests) == 2

    do_extract_source(source=source)
    assert len(llm.chat_requests) == 2

    settings.LLM_MODEL = "another-model"
    reset_extractor()
    do_extract_source(source=source)
    assert len(llm.chat_requests) == 4

    edited = tmp_path / "prompts"
    shutil.copytree(prompts.PROMPTS_DIR, edited)
    (edited / "v1" / "extract.txt").write_text(
        (edited / "v1" / "extract.txt").read_text() + "\nBe thorough.\n"
    )
    original = prompts.PROMPTS_DIR
    prompts.PROMPTS_DIR = edited
    prompts.load_prompts.cache_clear()
    reset_extractor()
    try:
        do_extract_source(source=source)
    finally:
        prompts.PROMPTS_DIR = original
        prompts.load_prompts.cache_clear()
        reset_extractor()
    assert len(llm.chat_requests) == 6
    assert ExtractionRun.objects.values("prompt_version").distinct().count() == 2
    # The document's evidence now comes from the newest run only.
    newest = ExtractionRun.objects.order_by("-created_at").first()
    assert newest is not None
    assert set(Mention.objects.values_list("run_id", flat=True)) == {newest.pk}


def test_known_only_sources_add_evidence_for_existing_entities_but_create_none(
    llm, ingest_text, alice
):
    world = World(
        entities={
            "Ada Lovelace": "person",
            "Charles Babbage": "person",
            "Mary Somerville": "person",
        },
        relations=[
            ("Ada Lovelace", "Charles Babbage", "related_to"),
            ("Mary Somerville", "Ada Lovelace", "related_to"),
        ],
    )
    llm.responder = world
    ingest_text(PARAGRAPH)
    before = set(names(alice.workspace))
    assert before == {"Ada Lovelace", "Charles Babbage"}

    ingest_text(
        "Mary Somerville tutored Ada Lovelace. Ada Lovelace wrote to Charles Babbage often.",
        title="letters",
        known_only=True,
    )

    assert set(names(alice.workspace)) == before
    assert Entity.objects.get(name="Ada Lovelace").mention_count == 3
    assert edges(alice.workspace) == {("Ada Lovelace", "Charles Babbage", "related_to")}
    assert Relation.objects.get().evidence_count == 2
    account = SourceExtraction.objects.get(source__name="letters")
    assert account.counts["entities_skipped_known_only"] == 1
    assert account.counts["relations_dangling_dropped"] == 1


@pytest.mark.parametrize(("policy", "expected"), [("drop", set()), ("create", {"Babbage"})])
def test_relations_with_unlisted_endpoints_are_dropped_or_create_them(
    llm, ingest_text, alice, settings, policy, expected
):
    settings.EXTRACTION_DANGLING_RELATIONS = policy
    llm.script(
        '("entity"<|>Ada Lovelace<|>person<|>Mathematician.)\n'
        '("relationship"<|>Ada Lovelace<|>Babbage<|>related_to<|>Colleagues.<|>work<|>6)',
        DONE,
    )
    ingest_text(PARAGRAPH)
    assert set(names(alice.workspace)) - {"Ada Lovelace"} == expected
    assert len(edges(alice.workspace)) == len(expected)
    if expected:
        assert names(alice.workspace)["Babbage"] == "concept"


def test_windows_go_out_concurrently(llm, ingest_text, settings):
    settings.EXTRACTION_GLEANING_PASSES = 0
    settings.EXTRACTION_WINDOW_TOKENS = 300
    settings.LLM_CONCURRENCY = 4
    reset_extractor()
    llm.default_delay = 0.4
    llm.responder = World(entities={"Station 3": "location"})
    ingest_text(long_text(8))

    starts = sorted(r.received_at for r in llm.chat_requests)
    assert len(starts) >= 4
    # Four requests arrived before the first could have been answered.
    assert starts[3] - starts[0] < 0.4


def test_an_edited_document_re_extracts_only_changed_windows_and_drops_stale_evidence(
    llm, ingest_text, alice, settings
):
    from ingest.actions.sources import do_add_text

    settings.EXTRACTION_GLEANING_PASSES = 0
    settings.EXTRACTION_WINDOW_TOKENS = 300
    reset_extractor()
    llm.responder = World(entities={"Station 1": "location", "Station 6": "location"})
    text = long_text(8)
    source = ingest_text(text, title="survey")
    first = len(llm.chat_requests)
    assert Entity.objects.filter(name="Station 6").exists()

    edited = text.replace("Station 6 of the survey", "Outpost 6 of the survey")
    do_add_text(source=source, title="survey", text=edited)
    from tests.support import run_pending

    run_pending(source)

    resent = len(llm.chat_requests) - first
    assert 1 <= resent < first
    assert not Entity.objects.filter(name="Station 6").exists()
    assert Entity.objects.get(name="Station 1").mention_count == 1


def test_deleting_a_source_takes_back_its_evidence_only(llm, ingest_text, alice):
    llm.responder = World(
        entities={"Ada Lovelace": "person", "Charles Babbage": "person"},
        relations=[("Ada Lovelace", "Charles Babbage", "related_to")],
    )
    keep = ingest_text(PARAGRAPH, title="keep")
    gone = ingest_text("Ada Lovelace and Charles Babbage met in 1833.", title="gone")
    assert Entity.objects.get(name="Ada Lovelace").mention_count == 2
    assert Entity.objects.get(name="Ada Lovelace").source_ids == sorted([keep.pk, gone.pk])
    assert Relation.objects.get().evidence_count == 2

    do_delete_source(source_id=gone.pk)

    assert Entity.objects.get(name="Ada Lovelace").mention_count == 1
    assert Entity.objects.get(name="Ada Lovelace").source_ids == [keep.pk]
    assert Relation.objects.get().evidence_count == 1
    assert not Mention.objects.filter(chunk__document__source_id=gone.pk).exists()
    do_delete_source(source_id=keep.pk)
    assert not Entity.objects.exists()
    assert not Relation.objects.exists()


def test_the_estimate_counts_uncached_windows_and_calls_nothing(llm, ingest_text, settings):
    settings.LLM_PRICE_INPUT_PER_MTOK = 2.0
    settings.LLM_PRICE_OUTPUT_PER_MTOK = 8.0
    llm.responder = World(entities={"Ada Lovelace": "person"})
    source = ingest_text(PARAGRAPH)
    sent = len(llm.chat_requests)

    cached = estimate_source(source=source)
    forced = estimate_source(source=source, force=True)

    assert len(llm.chat_requests) == sent
    assert cached.windows == 1
    assert cached.windows_to_extract == 0
    assert cached.prompt_tokens == 0
    assert forced.windows_to_extract == 1
    assert forced.prompt_tokens > len(PARAGRAPH) // 4
    assert forced.cost == pytest.approx(
        (forced.prompt_tokens * 2.0 + forced.completion_tokens * 8.0) / 1e6
    )


def test_gleaning_requests_carry_the_whole_conversation(llm, ingest_text):
    seen = []

    def responder(body):
        seen.append(is_glean(body))
        return Reply(content=DONE)

    llm.responder = responder
    ingest_text(PARAGRAPH)
    assert seen == [False, True]
