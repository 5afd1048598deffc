"""`manage.py extract`, `schema` and `eval_extraction`: output, exit codes, no surprises."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from knowledge.evaluation import load_gold
from knowledge.extraction.extractors import reset_extractor
from knowledge.models import EntityType, RelationType, SourceExtraction, TypeStatus
from tests.knowledge.conftest import World, is_glean, window_text
from tests.llm_server import DONE, Reply

GOLD = Path(django_settings.BASE_DIR) / "tests" / "fixtures" / "extraction_gold.jsonl"


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_extract_estimate_prints_tokens_and_cost_without_calling_anything(
    alice, llm, ingest_text, settings
):
    settings.LLM_PRICE_INPUT_PER_MTOK = 3.0
    llm.responder = World(entities={"Ada Lovelace": "person"})
    source = ingest_text("Ada Lovelace wrote the first program.")
    sent = len(llm.chat_requests)

    out, _ = run("extract", "--workspace", "acme", "--estimate", "--force", "--json")
    body = json.loads(out)
    assert body["total"]["windows_to_extract"] == 1
    assert body["total"]["prompt_tokens"] > 0
    assert body["total"]["cost"] > 0
    assert body["sources"][0]["source_id"] == source.pk
    text, _ = run("extract", "--workspace", "acme", "--estimate")
    assert "0 of 1 window(s) to extract (1 cached)" in text
    assert len(llm.chat_requests) == sent


def test_extract_reruns_from_the_cache_or_with_force(alice, llm, ingest_text):
    llm.responder = World(entities={"Ada Lovelace": "person"})
    source = ingest_text("Ada Lovelace wrote the first program.")
    sent = len(llm.chat_requests)

    out, _ = run("extract", "--workspace", "acme", "--source", str(source.pk), "--json")
    report = json.loads(out)["sources"][0]
    assert report["cached"] == 1
    assert report["extracted"] == 0
    assert len(llm.chat_requests) == sent

    out, _ = run("extract", "--workspace", "acme", "--source", str(source.pk), "--force")
    assert "1 extracted, 0 from the cache" in out
    assert len(llm.chat_requests) == sent + 2


def test_extract_exits_1_when_a_budget_stops_it(alice, llm, ingest_text, settings):
    llm.responder = World(entities={"Ada Lovelace": "person"})
    source = ingest_text("Ada Lovelace wrote the first program.")
    with pytest.raises(CommandError) as error:
        run(
            "extract", "--workspace", "acme", "--source", str(source.pk),
            "--force", "--token-budget", "10",
        )  # fmt: skip
    assert error.value.returncode == 1
    assert "budget" in str(error.value)
    account = SourceExtraction.objects.get(source=source)
    assert account.status == "budget_exceeded"
    assert account.token_budget == 10


def test_extract_exits_1_when_the_llm_fails_and_2_on_usage_errors(
    alice, llm, ingest_text, settings
):
    llm.responder = World(entities={"Ada Lovelace": "person"})
    source = ingest_text("Ada Lovelace wrote the first program.")
    settings.LLM_MAX_RETRIES = 0
    reset_extractor()
    llm.script(Reply(status=500, content="model crashed"))
    with pytest.raises(CommandError) as failed:
        run("extract", "--workspace", "acme", "--source", str(source.pk), "--force")
    assert failed.value.returncode == 1
    with pytest.raises(CommandError) as unknown:
        run("extract", "--workspace", "nope")
    assert unknown.value.returncode == 2
    with pytest.raises(CommandError) as missing:
        run("extract", "--workspace", "acme", "--source", "999999")
    assert missing.value.returncode == 2
    with pytest.raises(CommandError) as budget_alone:
        run("extract", "--workspace", "acme", "--token-budget", "5")
    assert budget_alone.value.returncode == 2


def test_schema_command_lists_adds_accepts_retires_and_renames(alice):
    out, _ = run("schema", "--workspace", "acme", "list")
    assert "person" in out
    assert "works_for" in out
    run("schema", "--workspace", "acme", "add-type", "Gene", "--description", "A gene",
        "--example", "BRCA1")  # fmt: skip
    gene = EntityType.objects.get(workspace=alice.workspace, name="gene")
    assert gene.examples == ["BRCA1"]
    run("schema", "--workspace", "acme", "add-relation", "inhibits")
    assert RelationType.objects.get(name="inhibits").status == TypeStatus.ACTIVE
    run("schema", "--workspace", "acme", "retire", "gene")
    assert EntityType.objects.get(name="gene").status == TypeStatus.RETIRED
    run("schema", "--workspace", "acme", "accept", "gene")
    assert EntityType.objects.get(name="gene").status == TypeStatus.ACTIVE
    run("schema", "--workspace", "acme", "rename", "inhibits", "blocks")
    assert RelationType.objects.filter(name="blocks").exists()
    listed = json.loads(run("schema", "--workspace", "acme", "list", "--json")[0])
    assert "gene" in {t["name"] for t in listed["entity_types"]}
    assert "blocks" in {t["name"] for t in listed["relation_types"]}


def test_schema_command_refusals_have_exit_codes(alice):
    with pytest.raises(CommandError) as taken:
        run("schema", "--workspace", "acme", "add-type", "person")
    assert taken.value.returncode == 1
    with pytest.raises(CommandError) as unknown:
        run("schema", "--workspace", "acme", "accept", "nothing_like_it")
    assert unknown.value.returncode == 1
    with pytest.raises(CommandError) as fallback:
        run("schema", "--workspace", "acme", "retire", "related_to")
    assert fallback.value.returncode == 1
    with pytest.raises(CommandError) as arity:
        run("schema", "--workspace", "acme", "rename", "person")
    assert arity.value.returncode == 2


def perfect_model():
    """Answers each gold text with exactly its gold entities and relations."""
    replies = {}
    for line in GOLD.read_text().splitlines():
        record = json.loads(line)
        lines = [f'("entity"<|>{e["name"]}<|>{e["type"]}<|>x)' for e in record["entities"]]
        lines += [
            f'("relationship"<|>{r["source"]}<|>{r["target"]}<|>{r["type"]}<|>x<|>k<|>5)'
            for r in record["relations"]
        ]
        replies[record["text"]] = "\n".join(lines)

    def respond(body):
        if is_glean(body):
            return Reply(content=DONE)
        return Reply(content=replies[window_text(body)])

    return respond


def test_eval_extraction_scores_a_perfect_model_at_one(llm):
    llm.responder = perfect_model()
    out, _ = run("eval_extraction", str(GOLD), "--json")
    report = json.loads(out)
    assert report["records"] == len(load_gold(GOLD))
    assert report["extractor"] == "llm"
    for key in ("entities", "relations", "entities_any_type", "relations_any_type"):
        assert report[key]["f1"] == 1.0, key
    assert report["entity_types"]["person"]["tp"] > 0


def test_eval_extraction_counts_wrong_types_and_reversed_relations(llm, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps(
            {
                "text": "Google acquired DeepMind.",
                "entities": [
                    {"name": "Google", "type": "organization"},
                    {"name": "DeepMind", "type": "organization"},
                ],
                "relations": [{"source": "Google", "target": "DeepMind", "type": "owns"}],
            }
        )
        + "\n"
    )
    llm.script(
        '("entity"<|>google<|>organization<|>x)\n'
        '("entity"<|>DeepMind<|>product<|>x)\n'
        '("entity"<|>Alphabet<|>organization<|>x)\n'
        '("relationship"<|>DeepMind<|>Google<|>owns<|>x<|>k<|>5)',
        DONE,
    )
    report = json.loads(run("eval_extraction", str(gold), "--json")[0])
    assert report["entities"] == {
        "tp": 1, "fp": 2, "fn": 1, "precision": 0.3333, "recall": 0.5, "f1": 0.4
    }  # fmt: skip
    assert report["entities_any_type"]["tp"] == 2
    assert report["relations"]["tp"] == 0
    assert report["relations"]["fn"] == 1
    assert report["entity_types"]["product"] == {
        "tp": 0, "fp": 1, "fn": 0, "precision": 0.0, "recall": 0.0, "f1": 0.0
    }  # fmt: skip


def test_eval_extraction_runs_the_offline_extractor_without_an_llm():
    out, _ = run("eval_extraction", str(GOLD))
    assert "(offline extractor)" in out
    assert "entities (any type)" in out
    report = json.loads(run("eval_extraction", str(GOLD), "--json")[0])
    assert report["extractor"] == "offline"
    assert report["entities"]["tp"] > 10


def test_eval_extraction_refuses_a_malformed_gold_file_with_exit_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "x", "entities": [{"name": "A"}]}\n')
    with pytest.raises(CommandError) as error:
        run("eval_extraction", str(bad))
    assert error.value.returncode == 2
    assert "bad.jsonl:1" in str(error.value)
    with pytest.raises(CommandError) as missing:
        run("eval_extraction", str(tmp_path / "nope.jsonl"))
    assert missing.value.returncode == 2


def test_merge_and_unmerge_commands_take_ids_or_exact_names(alice, llm, ingest_text):
    from knowledge.models import Entity
    from tests.knowledge.actions.curation.curation_data import FIRST, WORLD

    llm.responder = WORLD
    ingest_text(FIRST)
    alphabet = Entity.objects.get(name="Alphabet")
    out, _ = run("merge", "--workspace", "acme", "Google", str(alphabet.pk), "--into", "Alphabet")
    assert "Merged 'Google' into 'Alphabet'" in out
    event_id = out.split("(event ")[1].split(";")[0]
    assert Entity.objects.get(name="Google").state == "merged"
    out, _ = run("unmerge", "--workspace", "acme", event_id)
    assert "Undid merge" in out
    assert Entity.objects.get(name="Google").state == "active"
    with pytest.raises(CommandError) as again:
        run("unmerge", "--workspace", "acme", event_id)
    assert again.value.returncode == 1
    with pytest.raises(CommandError) as unknown:
        run("merge", "--workspace", "acme", "Google", "Nobody")
    assert unknown.value.returncode == 1
    with pytest.raises(CommandError) as single:
        run("merge", "--workspace", "acme", "Google")
    assert single.value.returncode == 2
