"""Consolidation during extraction: the cheap tiers, the review band, automatic merges that
undo like manual ones, homonyms kept apart, and no twins under concurrency."""

from __future__ import annotations

import json
import threading
from importlib import import_module
from io import StringIO

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.db import close_old_connections, connection, transaction

from ingest.actions.sources import FileInput, do_create_upload_source
from knowledge.actions.curation.entities import do_retype_entity
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.actions.curation.suggestions import do_reject_suggestion
from knowledge.actions.extraction.documents import do_extract_source
from knowledge.actions.resolution import resolve_entities
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.consolidation.keys import entity_key
from knowledge.consolidation.matching import UNTYPED_REASON
from knowledge.models import (
    CurationEvent,
    Entity,
    EntityType,
    Mention,
    MergeSuggestion,
)
from knowledge.selectors.matching import best_match, best_matches
from tests.llm_server import Reply
from tests.support import run_pending
from workspaces.actions.workspaces import do_create_workspace


def reply(*entities: tuple[str, str]):
    return "\n".join(f'("entity"<|>{name}<|>{kind}<|>x)' for name, kind in entities)


def active(type_name: str) -> list[str]:
    return sorted(
        Entity.objects.filter(state="active", type__name=type_name).values_list("name", flat=True)
    )


@pytest.fixture
def model(llm):
    """Each text is answered with the entities scripted for it (by a marker word)."""
    answers: dict[str, str] = {}

    def respond(body):
        text = body["messages"][-1]["content"]
        if len(body["messages"]) > 2:
            return Reply(content="<|DONE|>")
        for marker, answer in answers.items():
            if marker in text:
                return Reply(content=answer)
        return Reply(content="<|DONE|>")

    llm.responder = respond
    return answers


@pytest.mark.parametrize(
    ("first", "second", "kind"),
    [
        ("Apple Inc.", "Apple", "organization"),
        ("Acme Corporation", "ACME Corp", "organization"),
        ("Zürich", "Zurich", "location"),
        ("\uff34\uff4f\uff4b\uff59\uff4f", "Tokyo", "location"),  # full-width letters
        ("Transformers", "Transformer", "technology"),
        ("The Beatles", "Beatles", "organization"),
    ],
)
@pytest.mark.slow(reason="the first test of its worker to load the embedding model")
def test_variants_of_one_name_become_one_entity(model, ingest_text, first, second, kind):
    model["alpha"] = reply((first, kind))
    model["beta"] = reply((second, kind))
    ingest_text(f"alpha: {first} appears here.", title="a")
    ingest_text(f"beta: {second} appears here.", title="b")
    assert len(active(kind)) == 1
    assert Entity.objects.get(state="active", type__name=kind).mention_count == 2


def test_identifiers_that_differ_by_a_plural_stay_two_entities(model, ingest_text):
    model["alpha"] = reply(("sysconfig.get_config_var()", "technology"))
    model["beta"] = reply(("sysconfig.get_config_vars()", "technology"))
    ingest_text("alpha: sysconfig.get_config_var() returns one value.", title="a")
    ingest_text("beta: sysconfig.get_config_vars() returns a dictionary.", title="b")
    assert active("technology") == ["sysconfig.get_config_var()", "sysconfig.get_config_vars()"]
    assert not MergeSuggestion.objects.exists()


def test_the_migration_gives_an_identifier_keyed_by_its_singular_its_own_key(model, ingest_text):
    """Migration 0023: an entity keyed by the old rule ("get config var" for
    "get_config_vars") takes its own key, so the singular no longer lands on it."""
    model["alpha"] = reply(("get_config_vars", "technology"), ("Data Files", "concept"))
    ingest_text("alpha: get_config_vars and Data Files.", title="a")
    Entity.objects.filter(name="get_config_vars").update(canonical_name="get config var")

    migration = import_module("knowledge.migrations.0023_identifiers_keep_plurals")
    migration.rekey_identifiers(django_apps, None)

    keys = dict(Entity.objects.values_list("name", "canonical_name"))
    assert keys == {"get_config_vars": "get config vars", "Data Files": "data file"}
    model["beta"] = reply(("get_config_var", "technology"))
    ingest_text("beta: get_config_var.", title="b")
    assert active("technology") == ["get_config_var", "get_config_vars"]


def test_an_acronym_joins_its_expansion_by_an_automatic_merge_that_undoes(
    model, ingest_text, alice
):
    model["alpha"] = reply(("International Business Machines", "organization"))
    model["beta"] = reply(("IBM", "organization"))
    ingest_text("alpha: International Business Machines sells computers.", title="a")
    second = ingest_text("beta: IBM sells computers.", title="b")

    assert active("organization") == ["International Business Machines"]
    ibm = Entity.objects.get(name="International Business Machines")
    assert ibm.aliases == ["IBM"]
    event = CurationEvent.objects.get(action="auto_merge")
    assert event.actor is None
    assert event.payload["reasons"] == ["acronym"]

    do_unmerge(workspace=alice.workspace, event_id=event.pk)
    assert active("organization") == ["IBM", "International Business Machines"]
    assert Mention.objects.get(surface_form="IBM").entity.name == "IBM"
    # The pair is "not the same" now: re-extraction keeps them apart.
    do_extract_source(source=second, force=True)
    assert active("organization") == ["IBM", "International Business Machines"]


def test_an_acronym_that_reads_as_a_second_name_is_asked_about_not_merged(model, ingest_text):
    """ "BS" took "Buffer structure"; "Bounded Semaphore" is another reading of it."""
    model["alpha"] = reply(("BS", "concept"))
    model["beta"] = reply(("Buffer structure", "concept"))
    model["gamma"] = reply(("Bounded Semaphore", "concept"))
    ingest_text("alpha: BS here.", title="a")
    ingest_text("beta: BS, a Buffer structure here.", title="b")  # both in a passage
    assert active("concept") == ["BS"]

    ingest_text("gamma: Bounded Semaphore here.", title="c")
    assert active("concept") == ["BS", "Bounded Semaphore"]
    suggestion = MergeSuggestion.objects.get()
    assert suggestion.reasons == ["acronym", "BS reads as 2 names here"]


def test_two_letters_join_a_phrase_only_where_a_passage_has_both(model, ingest_text):
    """Two letters spell too many phrases: "HT" (curses.ascii's "Horizontal tab") had
    joined "heap types" on the Python manual. Without a passage holding both, the pair is
    a question; with one, as "LF" / "Line Feed" in a table row, a merge."""
    model["alpha"] = reply(("HT", "concept"), ("LF", "concept"), ("OP", "concept"))
    model["beta"] = reply(("heap types", "concept"))
    model["gamma"] = reply(("Line Feed", "concept"), ("OR Patterns", "concept"))
    ingest_text("alpha: HT is the tab. LF ends the line. OP is a token.", title="a")
    # Neither "HT_SIZE" nor "patterns" alone makes a pair of one passage.
    ingest_text("beta: heap types and HT_SIZE. OP matches patterns.", title="b")
    ingest_text("gamma: LF, the Line Feed, ends a line. OR Patterns match.", title="c")

    assert active("concept") == ["HT", "LF", "OP", "OR Patterns", "heap types"]
    questions = {tuple(s.reasons) for s in MergeSuggestion.objects.all()}
    assert questions == {
        ("acronym", "HT and heap types never appear together"),
        ("acronym", "OP and OR Patterns never appear together"),
    }
    merge = CurationEvent.objects.get(action="auto_merge")
    assert merge.payload["reasons"] == ["acronym"]


def test_three_letters_of_a_description_join_it_only_where_a_passage_has_both(model, ingest_text):
    """Python manual: "CSS" had joined a section title, "Compute the Standard Score", and
    "SSL" "SuSE Linux", never written together; "GIL" is in a passage with "global
    interpreter lock". An organisation's three letters ("IBM") are its name and need no
    passage (test_an_acronym_joins_its_expansion_by_an_automatic_merge_that_undoes)."""
    model["alpha"] = reply(("CSS", "concept"), ("GIL", "concept"))
    model["beta"] = reply(("Compute the Standard Score", "concept"))
    model["gamma"] = reply(("global interpreter lock", "concept"))
    ingest_text("alpha: CSS styles pages. The GIL is held.", title="a")
    ingest_text("beta: Compute the Standard Score of a sample.", title="b")
    ingest_text("gamma: The global interpreter lock (GIL) is held by one thread.", title="c")

    assert active("concept") == ["CSS", "Compute the Standard Score", "GIL"]
    assert MergeSuggestion.objects.get().reasons == [
        "acronym",
        "CSS and Compute the Standard Score never appear together",
    ]


def test_an_acronym_with_two_expansions_at_hand_joins_neither(model, ingest_text):
    model["alpha"] = reply(("Certificate Request", "concept"), ("Coverage Results", "concept"))
    model["beta"] = reply(("CR", "concept"))
    ingest_text("alpha: Certificate Request and Coverage Results.", title="a")
    ingest_text("beta: CR here.", title="b")
    assert active("concept") == ["CR", "Certificate Request", "Coverage Results"]
    assert MergeSuggestion.objects.get().reasons == ["acronym", "CR reads as 2 names here"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("unittest.SkipTest", "SkipTest"),
        ("TarFile.list", "tarfile.TarFile.list"),
        ("os.sched_getaffinity()", "sched_getaffinity"),
    ],
)
def test_a_qualified_code_name_and_its_shorter_form_are_one_entity(
    model, ingest_text, first, second
):
    model["alpha"] = reply((first, "technology"))
    model["beta"] = reply((second, "technology"))
    ingest_text(f"alpha: {first} here.", title="a")
    ingest_text(f"beta: {second} here.", title="b")

    assert active("technology") == [first]
    event = CurationEvent.objects.get(action="auto_merge")
    assert event.payload["reasons"] == ["a qualified name and its shorter form"]


def test_a_shorter_form_that_ends_two_qualified_names_joins_neither(model, ingest_text):
    model["alpha"] = reply(("SimpleQueue", "technology"))
    model["beta"] = reply(("multiprocessing.SimpleQueue", "technology"))
    model["gamma"] = reply(("queue.SimpleQueue", "technology"))
    model["delta"] = reply(("open", "technology"), ("os.open", "technology"))
    ingest_text("alpha: SimpleQueue here.", title="a")
    ingest_text("beta: multiprocessing.SimpleQueue here.", title="b")
    assert active("technology") == ["SimpleQueue"]

    # Another qualified name ends the same way: the first merge stays, this one is not made.
    ingest_text("gamma: queue.SimpleQueue here.", title="c")
    assert active("technology") == ["SimpleQueue", "queue.SimpleQueue"]
    # One plain word is no shorter form: the built-in open is not os.open.
    ingest_text("delta: open and os.open here.", title="d")
    assert {"open", "os.open"} <= set(active("technology"))


def test_a_module_member_with_members_of_its_own_does_not_take_the_class_member(model, ingest_text):
    """The module datetime and its class datetime share a name: the class `datetime.date`
    (its members named) is not the method `datetime.datetime.date`; `socket.recv` (no
    members) is the method `socket.socket.recv` written short."""
    model["alpha"] = reply(
        ("datetime.date", "technology"),
        ("datetime.date.today", "technology"),
        ("socket.recv", "technology"),
    )
    model["beta"] = reply(("datetime.datetime.date", "technology"))
    model["gamma"] = reply(("socket.socket.recv", "technology"))
    ingest_text("alpha: datetime.date, datetime.date.today and socket.recv here.", title="a")
    ingest_text("beta: datetime.datetime.date here.", title="b")
    ingest_text("gamma: socket.socket.recv here.", title="c")

    assert active("technology") == [
        "datetime.date",
        "datetime.date.today",
        "datetime.datetime.date",
        "socket.recv",
    ]
    # Members a passage names count too, before any is extracted as an entity.
    model["delta"] = reply(("datetime.tzinfo", "technology"))
    model["epsilon"] = reply(("datetime.datetime.tzinfo", "technology"))
    ingest_text("delta: datetime.tzinfo, see datetime.tzinfo.utcoffset(dt).", title="d")
    ingest_text("epsilon: datetime.datetime.tzinfo here.", title="e")
    assert {"datetime.tzinfo", "datetime.datetime.tzinfo"} <= set(active("technology"))


def test_homonyms_of_different_types_stay_apart_and_are_asked_about_once(model, ingest_text, alice):
    model["alpha"] = reply(("Paris", "location"), ("Paris", "person"))
    source = ingest_text("alpha: Paris met Paris.")
    assert active("location") == ["Paris"]
    assert active("person") == ["Paris"]
    suggestion = MergeSuggestion.objects.get()
    assert suggestion.reasons == ["same name, different types: location / person"]

    do_reject_suggestion(workspace=alice.workspace, suggestion_id=suggestion.pk)
    do_extract_source(source=source, force=True)
    ingest_text("alpha: Paris met Paris again.", title="again")
    assert MergeSuggestion.objects.get().status == "rejected"
    assert active("location") == ["Paris"]
    assert active("person") == ["Paris"]


def test_a_name_one_source_types_two_ways_is_one_entity_of_its_majority_type(model, alice):
    model["alpha"] = reply(("Linux", "technology"))
    model["beta"] = reply(("Linux", "person"))
    files: list[FileInput] = [
        ("a.txt", [b"alpha: Linux runs the machine."]),
        ("b.txt", [b"alpha: Linux boots in seconds."]),
        ("c.txt", [b"beta: Linux answered the letter."]),
    ]
    source, _ = do_create_upload_source(workspace=alice.workspace, files=files)
    run_pending(source)
    assert active("technology") == ["Linux"]
    assert active("person") == []
    assert Entity.objects.get(state="active").type_votes == {"person": 1, "technology": 2}
    assert not MergeSuggestion.objects.exists()


def test_a_name_two_sources_type_two_ways_stays_two_entities(model, ingest_text):
    model["alpha"] = reply(("Linux", "technology"))
    model["beta"] = reply(("Linux", "person"))
    ingest_text("alpha: Linux runs the machine.", title="a")
    ingest_text("beta: Linux answered the letter.", title="b")
    assert active("technology") == ["Linux"]
    assert active("person") == ["Linux"]
    assert MergeSuggestion.objects.get().reasons[0].startswith("same name, different types")


def test_an_entity_takes_the_type_most_of_its_evidence_gives_it(model, ingest_text, alice):
    model["alpha"] = reply(("Kubernetes", "product"))
    model["beta"] = reply(("Kubernetes", "technology"))
    ingest_text("alpha: Kubernetes runs containers.", title="a")
    for n in range(3):
        ingest_text(f"beta {n}: Kubernetes schedules pods.", title=f"b{n}")
    product = Entity.objects.get(state="active", type__name="product")
    technology = Entity.objects.get(state="active", type__name="technology")
    assert Mention.objects.filter(entity=product).get().extracted_type == "product"
    assert technology.type_votes == {"technology": 3}
    # Typed two ways: a person is asked, and keeps the first one as the survivor...
    assert MergeSuggestion.objects.get().reasons[0].startswith("same name, different types")
    merge = do_merge_entities(
        workspace=alice.workspace, survivor_id=product.pk, merged_ids=[technology.pk]
    )
    # ...whose type is then the majority's.
    product.refresh_from_db()
    assert product.type.name == "technology"
    assert product.type_votes == {"product": 1, "technology": 3}
    assert active("product") == []

    # The minority type's later mentions still land on it, as votes.
    ingest_text("alpha 2: Kubernetes again.", title="a2")
    assert active("technology") == ["Kubernetes"]
    product.refresh_from_db()
    assert product.type_votes == {"product": 2, "technology": 3}
    assert MergeSuggestion.objects.filter(status="open").count() == 0

    # Undo restores both entities with the types they had.
    do_unmerge(workspace=alice.workspace, event_id=merge.pk)
    product.refresh_from_db()
    technology.refresh_from_db()
    assert (product.type.name, product.state) == ("product", "active")
    assert (technology.type.name, technology.state) == ("technology", "active")
    assert technology.type_votes == {"technology": 3}


def test_a_person_s_type_outvotes_the_extractor(model, ingest_text, alice):
    model["beta"] = reply(("Kubernetes", "technology"))
    for n in range(2):
        ingest_text(f"beta {n}: Kubernetes schedules pods.", title=f"b{n}")
    entity = Entity.objects.get(state="active")
    do_retype_entity(workspace=alice.workspace, entity_id=entity.pk, type_name="product")
    ingest_text("beta 3: Kubernetes once more.", title="b3")
    entity.refresh_from_db()
    assert entity.type.name == "product"
    assert entity.type_curated
    assert entity.type_votes == {"technology": 3}
    assert Entity.objects.filter(state="active").count() == 1


def test_a_name_of_the_fallback_type_joins_the_entity_of_another_type_spelled_alike(
    model, ingest_text
):
    model["alpha"] = reply(("FileHandler", "technology"))
    model["beta"] = reply(("FileHandler", "concept"))
    ingest_text("alpha: FileHandler writes logs.", title="a")
    ingest_text("beta: FileHandler again.", title="b")
    entity = Entity.objects.get(state="active", name="FileHandler")
    assert entity.type.name == "technology"
    assert entity.mention_count == 2
    assert entity.type_votes == {"concept": 1, "technology": 1}
    assert not MergeSuggestion.objects.exists()


def test_an_untyped_entity_takes_the_type_of_names_that_join_it_later(model, ingest_text):
    model["alpha"] = reply(("BlockingIOError", "concept"))
    model["beta"] = reply(("BlockingIOError", "technology"))
    ingest_text("alpha: BlockingIOError.", title="a")
    for n in range(2):
        ingest_text(f"beta {n}: BlockingIOError is raised.", title=f"b{n}")
    entity = Entity.objects.get(state="active")
    assert entity.type.name == "technology"
    assert entity.type_votes == {"concept": 1, "technology": 2}


def test_one_batch_typing_a_name_two_ways_makes_one_entity(alice):
    do_ensure_default_schema(workspace=alice.workspace)
    types = {t.name: t for t in EntityType.objects.filter(workspace=alice.workspace)}
    wanted = [
        ("Deque", types["concept"]),
        ("Deque", types["technology"]),
        ("deque", types["person"]),
    ]
    with transaction.atomic():
        found = resolve_entities(alice.workspace, wanted, create=True)
    assert found[("deque", types["concept"].pk)] == found[("deque", types["technology"].pk)]
    assert active("technology") == ["Deque"]
    assert active("person") == ["deque"]
    assert active("concept") == []


def test_names_with_one_key_but_another_case_stay_apart_across_the_fallback_type(
    model, ingest_text
):
    model["alpha"] = reply(("GET", "technology"))
    model["beta"] = reply(("get()", "concept"))
    ingest_text("alpha: the GET method.", title="a")
    ingest_text("beta: call get() on the section.", title="b")
    assert active("technology") == ["GET"]
    assert active("concept") == ["get()"]
    assert MergeSuggestion.objects.get().reasons[0].startswith("same name, different types")


def test_an_untyped_entity_takes_one_type_of_names_and_asks_about_the_next(model, ingest_text):
    model["alpha"] = reply(("Paris", "concept"))
    model["beta"] = reply(("Paris", "location"))
    model["gamma"] = reply(("Paris", "person"))
    for marker in ("alpha", "beta", "gamma"):
        ingest_text(f"{marker}: Paris.", title=marker)
    untyped = Entity.objects.get(state="active", type__name="concept")
    assert untyped.type_votes == {"concept": 1, "location": 1}
    assert active("person") == ["Paris"]
    assert MergeSuggestion.objects.get().reasons[0].startswith("same name, different types")


def test_hard_negatives_stay_apart_without_suggestions(model, ingest_text):
    model["alpha"] = reply(("Java", "technology"), ("iPhone 14", "product"))
    model["beta"] = reply(("JavaScript", "technology"), ("iPhone 15", "product"))
    ingest_text("alpha: Java and the iPhone 14.", title="a")
    ingest_text("beta: JavaScript and the iPhone 15.", title="b")
    assert active("technology") == ["Java", "JavaScript"]
    assert active("product") == ["iPhone 14", "iPhone 15"]
    assert not MergeSuggestion.objects.exists()


def test_the_review_band_suggests_and_a_rejection_never_comes_back(model, ingest_text, alice):
    model["alpha"] = reply(("John Smith", "person"))
    model["beta"] = reply(("J. Smith", "person"))
    ingest_text("alpha: John Smith wrote it.", title="a")
    second = ingest_text("beta: J. Smith wrote it.", title="b")

    assert active("person") == ["J. Smith", "John Smith"]
    suggestion = MergeSuggestion.objects.get()
    assert suggestion.status == "open"
    assert 0.7 <= suggestion.score < 0.9
    assert suggestion.reasons

    do_reject_suggestion(workspace=alice.workspace, suggestion_id=suggestion.pk)
    do_extract_source(source=second, force=True)
    ingest_text("beta: J. Smith wrote another one.", title="c")
    assert MergeSuggestion.objects.count() == 1
    assert MergeSuggestion.objects.get().status == "rejected"
    assert active("person") == ["J. Smith", "John Smith"]


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_consolidations_create_no_twins():
    workspace = do_create_workspace(slug="race")
    do_ensure_default_schema(workspace=workspace)
    organization = EntityType.objects.get(workspace=workspace, name="organization")
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def consolidate(names: list[str]) -> None:
        try:
            barrier.wait(timeout=10)
            with transaction.atomic():
                resolve_entities(workspace, [(n, organization) for n in names], create=True)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            close_old_connections()
            connection.close()

    for _ in range(5):
        threads = [
            threading.Thread(target=consolidate, args=(["Acme Corp", "Globex", "Initech"],)),
            threading.Thread(target=consolidate, args=(["ACME", "Globex Inc.", "Initech LLC"],)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert not errors
    assert sorted(
        Entity.objects.filter(workspace=workspace, state="active").values_list(
            "canonical_name", flat=True
        )
    ) == ["acme", "globex", "initech"]


def test_consolidate_applies_the_tiers_to_existing_entities_idempotently(
    model, ingest_text, alice, settings
):
    # While ingesting, nothing is similar enough to merge or suggest...
    settings.CONSOLIDATION_AUTO_MERGE = 0.999
    settings.CONSOLIDATION_REVIEW = 0.999
    settings.CONSOLIDATION_EMBEDDING_REVIEW = 1.01
    model["alpha"] = reply(("International Business Machines", "organization"))
    model["beta"] = reply(("IBM", "organization"), ("J. Smith", "person"))
    model["gamma"] = reply(("John Smith", "person"))
    ingest_text("alpha: International Business Machines.", title="a")
    ingest_text("beta: IBM and J. Smith.", title="b")
    ingest_text("gamma: John Smith.", title="c")
    assert active("organization") == ["IBM", "International Business Machines"]
    assert not MergeSuggestion.objects.exists()

    # ...then the thresholds are back to their defaults and the workspace is consolidated.
    settings.CONSOLIDATION_AUTO_MERGE = None
    settings.CONSOLIDATION_REVIEW = None
    first = consolidate("--workspace", "acme")
    assert first["merged"] == 1
    assert first["suggested"] == 1
    assert active("organization") == ["International Business Machines"]
    assert MergeSuggestion.objects.get().status == "open"
    again = consolidate("--workspace", "acme")
    assert again["merged"] == 0
    assert again["suggested"] == 0


def consolidate(*args: str) -> dict:
    out = StringIO()
    call_command("consolidate", *args, "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def test_consolidate_joins_an_untyped_entity_to_its_typed_twin_and_the_merge_undoes(alice):
    """Graphs built before the fallback type's rule hold such pairs; consolidation joins
    them (the larger survives, the type follows the evidence), never "GET" with "get()"."""
    workspace = alice.workspace
    do_ensure_default_schema(workspace=workspace)
    types = {t.name: t for t in EntityType.objects.filter(workspace=workspace)}

    def entity(name: str, type_name: str, mentions: int) -> Entity:
        return Entity.objects.create(
            workspace=workspace, name=name, canonical_name=entity_key(name, type_name),
            type=types[type_name], mention_count=mentions,
        )  # fmt: skip

    typed, untyped = entity("ZipInfo", "technology", 25), entity("ZipInfo", "concept", 5)
    entity("GET", "technology", 3), entity("get()", "concept", 4)
    report = consolidate("--workspace", workspace.slug)
    assert report["merged"] == 1
    untyped.refresh_from_db()
    assert (untyped.state, untyped.merged_into_id) == ("merged", typed.pk)
    event = CurationEvent.objects.get(action="auto_merge")
    assert event.payload["reasons"] == [UNTYPED_REASON]
    assert active("technology") == ["GET", "ZipInfo"]
    assert active("concept") == ["get()"]
    assert consolidate("--workspace", workspace.slug)["merged"] == 0

    do_unmerge(workspace=workspace, event_id=event.pk)
    assert active("concept") == ["ZipInfo", "get()"]


def test_a_close_name_embedding_queues_a_pair_for_review_but_never_merges(model, ingest_text):
    model["alpha"] = reply(("PostgreSQL", "technology"))
    model["beta"] = reply(("Postgres", "technology"))
    ingest_text("alpha: PostgreSQL stores data.", title="a")
    ingest_text("beta: Postgres stores data.", title="b")

    assert active("technology") == ["PostgreSQL", "Postgres"]
    suggestion = MergeSuggestion.objects.get()
    assert suggestion.reasons[0].startswith("embedding 0.")
    assert suggestion.score >= 0.85
    assert Entity.objects.get(name="Postgres").embedding_dim == 384


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("tarfile.TarFile", "tarfile.TarFile.getnames"),
        ("msvcrt.getwch", "msvcrt.getwche"),
        ("asyncio.Queue", "queue.Queue"),
        ("PyObject_GenericGetAttr", "PyObject_GenericSetAttr"),
    ],
)
def test_code_names_a_path_tells_apart_are_never_queued_however_close_their_embeddings(
    model, ingest_text, settings, first, second
):
    settings.CONSOLIDATION_EMBEDDING_REVIEW = 0.5  # the embedding alone would queue them
    model["alpha"] = reply((first, "technology"))
    model["beta"] = reply((second, "technology"))
    ingest_text(f"alpha: {first} here.", title="a")
    ingest_text(f"beta: {second} here.", title="b")

    assert active("technology") == sorted([first, second])
    assert not MergeSuggestion.objects.exists()


def test_with_an_llm_the_review_band_is_decided_in_batches_and_recorded(
    llm, ingest_text, alice, settings
):
    settings.CONSOLIDATION_EMBEDDING_REVIEW = 1.01
    seen: list[str] = []

    def respond(body):
        text = body["messages"][-1]["content"]
        if "Pairs:" in text:
            seen.append(text)
            pairs = [line for line in text.splitlines() if line[:2] in {"1.", "2."}]
            answers = [
                f"{line[0]}: {'same' if 'Smith' in line else 'different'} \u2014 judged"
                for line in pairs
            ]
            return Reply(content="\n".join(answers))
        if len(body["messages"]) > 2:
            return Reply(content="<|DONE|>")
        if "alpha" in text:
            return Reply(content=reply(("John Smith", "person"), ("Mary Jones", "person")))
        return Reply(content=reply(("J. Smith", "person"), ("M. Jones", "person")))

    llm.responder = respond
    ingest_text("alpha: John Smith and Mary Jones.", title="a")
    source = ingest_text("beta: J. Smith and M. Jones.", title="b")

    assert len(seen) == 1  # both pairs in one request
    assert "'John Smith'" in seen[0] or "'J. Smith'" in seen[0]
    assert active("person") == ["John Smith", "M. Jones", "Mary Jones"]
    smith, jones = MergeSuggestion.objects.order_by("pk")
    assert (smith.llm_verdict, smith.status) == ("same", "accepted")
    assert (jones.llm_verdict, jones.status) == ("different", "rejected")
    assert (
        CurationEvent.objects.get(action="auto_merge")
        .payload["reasons"][-1]
        .startswith("llm: same")
    )
    from knowledge.models import LlmCall

    assert LlmCall.objects.filter(source=source, purpose="review").count() == 1


def test_verdict_parsing_tolerates_formats_and_never_raises():
    import random

    from knowledge.actions.review import parse_verdicts

    text = "Here you go:\n1) SAME - same company\n**2: different** \u2014 other city\n3 unsure\n9: same"
    assert parse_verdicts(text, count=3) == {
        1: ("same", "same company"),
        2: ("different", "\u2014 other city".lstrip("\u2014 ")),
    }
    rng = random.Random(7)
    for _ in range(300):
        noise = "".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(0, 80)))
        assert isinstance(parse_verdicts(noise, count=5), dict)


def test_with_an_llm_a_long_description_is_summarised_once_and_reused(llm, ingest_text, alice):
    from knowledge.actions.review import do_summarize_descriptions

    calls: list[str] = []

    def respond(body):
        text = body["messages"][-1]["content"]
        if "Statements:" in text:
            calls.append(text)
            return Reply(content="Acme is a company that makes many things.")
        if len(body["messages"]) > 2:
            return Reply(content="<|DONE|>")
        n = text.split("chapter ")[1].split(":")[0] if "chapter " in text else "0"
        return Reply(content=f'("entity"<|>Acme<|>organization<|>Acme makes product {n}.)')

    llm.responder = respond
    for n in range(7):
        ingest_text(f"chapter {n}: Acme makes product {n}.", title=f"p{n}")

    acme = Entity.objects.get(name="Acme")
    assert len(calls) == 1  # once the 7th distinct fragment arrived
    assert "Acme makes product 6." in calls[0]
    assert acme.description == "Acme is a company that makes many things."
    assert do_summarize_descriptions(workspace=alice.workspace, entity_ids=[acme.pk]) == 0
    assert len(calls) == 1  # cached: same fragments


@pytest.mark.django_db
def test_a_batch_of_names_gets_each_name_s_own_best_match():
    """The spelling tier asks for a window's new names in one query: each name still gets
    the match it gets alone, whatever the names and types beside it."""
    workspace = do_create_workspace(slug="batch")
    do_ensure_default_schema(workspace=workspace)
    organization = EntityType.objects.get(workspace=workspace, name="organization")
    person = EntityType.objects.get(workspace=workspace, name="person")
    resolve_entities(
        workspace,
        [(n, organization) for n in ["Acme Corporation", "Globex Systems", "Initech"]]
        + [(n, person) for n in ["Ada Lovelace", "Alan Turing"]],
        create=True,
    )
    asked = [
        ("Acme Corp", organization),
        ("Zyxwv", organization),
        ("Ada Lovelace-Byron", person),
        ("Globex System", organization),
        ("Acme Corp", person),
        ("A. Turing", person),
    ]
    batch = best_matches(workspace, asked)
    alone = [best_match(workspace, name, entity_type) for name, entity_type in asked]
    assert [m and (m[0].pk, m[1]) for m in batch] == [m and (m[0].pk, m[1]) for m in alone]
    named = [m and m[0].name for m in batch]
    assert named[0] == "Acme Corporation"
    assert named[1] is None
    assert named[3] == "Globex Systems"
    assert named[4] is None  # an organization's name is no person's match


@pytest.mark.django_db
def test_the_candidates_kept_are_those_found_through_rare_keys_not_the_oldest(settings):
    """stat's page: "stat.S_ENFMT" shares four rare keys with "S_ENFMT" and one with each of
    many older names ("stat" as a word, a prefix, a suffix). Keeping the lowest ids left
    "S_ENFMT" out or in by chance (which rows each common key returned); the names found
    through the rarest keys come first (migration knowledge/0024)."""
    settings.CONSOLIDATION_MAX_CANDIDATES = 10
    workspace = do_create_workspace(slug="stat")
    do_ensure_default_schema(workspace=workspace)
    technology = EntityType.objects.get(workspace=workspace, name="technology")
    for older in (
        [f"statistics model {n}" for n in range(8)],  # the prefix "stat"
        [f"thermostat reading {n}" for n in range(8)],  # the suffix "stat"
        [f"stat tool {n}" for n in range(8)],  # the word "stat", its prefix and suffix
        ["S_ENFMT"],
    ):
        resolve_entities(workspace, [(n, technology) for n in older], create=True)

    match = best_match(workspace, "stat.S_ENFMT", technology)
    assert match is not None and match[0].name == "S_ENFMT"


@pytest.mark.django_db
def test_the_spelling_lookup_reads_the_gin_tree_with_a_plan_for_each_call():
    """Consolidation reads the blocking-key index right after writing it. A GIN pending
    list made every lookup scan all entries not yet merged, and a plan cached from the
    workspace's first windows (a nearly empty table) was kept for the rest of a crawl:
    together 200-480 ms a window instead of ~2 ms (migration knowledge/0021)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'entity_scoped_blocking_keys'"
        )
        assert "fastupdate=off" in cursor.fetchone()[0]
        cursor.execute(
            "SELECT proconfig FROM pg_proc WHERE proname = 'knowledge_blocking_candidates'"
        )
        assert "plan_cache_mode=force_custom_plan" in cursor.fetchone()[0]


@pytest.mark.django_db
def test_an_automatic_merge_records_the_rule_that_decided_it():
    """The curation history says which rule merged a name (knowledge/consolidation/decide.py):
    during resolution an acronym and a typo, during consolidation a re-keyed twin."""
    workspace = do_create_workspace(slug="rules")
    do_ensure_default_schema(workspace=workspace)
    organization = EntityType.objects.get(workspace=workspace, name="organization")
    resolve_entities(
        workspace, [("International Business Machines", organization), ("Microsoft", organization)],
        create=True,
    )  # fmt: skip
    resolve_entities(workspace, [("IBM", organization), ("Microsft", organization)], create=True)
    events = CurationEvent.objects.filter(workspace=workspace, action="auto_merge")
    rules = {e.summary: (e.payload["rule"], e.payload["reasons"][-1]) for e in events}
    assert rules == {
        "Merged 'IBM' into 'International Business Machines'": ("acronym", "acronym"),
        "Merged 'Microsft' into 'Microsoft'": ("similarity", "typo"),
    }

    stale = Entity.objects.create(
        workspace=workspace, name="Globex Corp.", canonical_name="globex corp", type=organization
    )
    Entity.objects.create(
        workspace=workspace, name="Globex", canonical_name="globex", type=organization,
        mention_count=3,
    )  # fmt: skip
    assert consolidate("--workspace", "rules")["merged"] == 1
    event = CurationEvent.objects.get(workspace=workspace, entity__name="Globex")
    assert event.payload["merged"][0]["id"] == stale.pk
    assert (event.payload["rule"], event.payload["reasons"]) == (
        "same_key",
        ["same canonical name"],
    )
