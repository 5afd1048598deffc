"""The LLM extractor against a real model: SmolLM2-135M served by llama.cpp.

This measures robustness to what a real, very small model writes, not extraction quality.
A few real pages (the Python documentation Debian installs, else a short text of our own)
go through the normal pipeline in a real worker, with LLM extraction and one gleaning pass.
The test then checks that:

- the pipeline finished: every document is done or failed with a short, readable error;
  no task crashed or was left running;
- every extraction run accounts for its replies: its counts are what the parser makes of
  the stored replies, its problems are bounded samples, and the parser neither crashed
  (internal_error) nor dropped a record written exactly in the prompt's format;
- nothing invalid reached the graph: entity names pass the validation rules, types are in
  the registry (active) or proposed by the model, mentions point at their exact text.

The report (JSON) of what was recovered, repaired and rejected, with samples of problems
and replies, is written to var/llm-tier/report.json and printed.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django_tasks_db.models import DBTaskResult

from ingest.actions.sources import do_create_upload_source
from ingest.models import FINISHED_STATUSES, Document, DocumentStatus, Source
from knowledge.extraction.parsing import (
    MAX_PROBLEMS,
    PROBLEM_CHARS,
    parse_extraction_output,
)
from knowledge.extraction.validation import MAX_NAME_CHARS, name_rejection_reason
from knowledge.models import (
    Entity,
    EntityType,
    ExtractionRun,
    LlmCall,
    Mention,
    Relation,
    RelationType,
    SourceExtraction,
    TypeOrigin,
    TypeStatus,
)
from knowledge.selectors.extraction import extraction_status
from tests.llm_tier.conftest import N_CTX, REPORT_DIR, THREADS, LlamaServer
from tests.support import start_worker, stop_process, wait_for
from workspaces.actions.workspaces import do_create_workspace

pytestmark = [pytest.mark.llm_real, pytest.mark.django_db(transaction=True)]

DOCS_DIR = Path("/usr/share/doc/python3.11/html")
PAGES = ("about.html", "bugs.html", "copyright.html", "library/keyword.html")
MAX_PAGE_BYTES = 200_000
# Used when the installed documentation is absent: a short text of our own.
OWN_PAGES = {
    "harbour.md": (
        "# The Harbour Light Society\n\n"
        "The Harbour Light Society was founded in Port Alder in 1887 by Mira Castell and "
        "Tomas Vey. The society keeps the Alder Point Lighthouse, which the engineer Hugo "
        "Brand designed. Mira Castell led the society until 1910, when Anna Reyes took over."
    ),
    "survey.md": (
        "# The Coastal Survey\n\n"
        "In 1902 the Coastal Survey of Vellmark mapped the shoals between Port Alder and "
        "Greywater. The survey ship Northern Tern carried the team, led by Captain Ilse Moor. "
        "Its charts were printed by the Greywater Press and used by the Harbour Light Society."
    ),
    "museum.md": (
        "# The Maritime Museum\n\n"
        "The Port Alder Maritime Museum opened in 1955 in the old customs house. It holds "
        "the original lens of the Alder Point Lighthouse and the logbooks of the Northern "
        "Tern, donated by the family of Ilse Moor."
    ),
}

# Small enough that the prompt, a reply and one gleaning turn fit in N_CTX tokens.
WINDOW_TOKENS = 200
MAX_COMPLETION_TOKENS = 320
GLEANING_PASSES = 1
# Only bounds a hung pipeline; nothing asserts on how long anything took.
PIPELINE_TIMEOUT = 1800.0
REPORT_PATH = REPORT_DIR / "report.json"
SAMPLE_CHARS = 1200

# What the parser tallies, grouped for the report (knowledge/extraction/parsing.py).
PARSER_REJECTED = ("malformed", "missing_fields", "unknown_record", "json_invalid")
PARSER_IGNORED = ("prose_lines", "fenced")
PARSER_REPAIRED = (
    "wrong_delimiter", "missing_parens", "list_prefix", "extra_fields", "defaulted_type",
    "bad_strength", "strength_clamped", "stray_chars", "long_name", "long_description",
    "duplicates", "json_fallback", "proposed_types", "truncated",
)  # fmt: skip
VALIDATION_DROPPED = ("self_relation", "over_entity_limit", "over_relation_limit")
# Counts that always come with a problem line (a sample for a person to read).
NOTED = ("malformed", "missing_fields", "unknown_record", "json_invalid", "internal_error")

# A record written exactly in the prompt's format, with plain fields: the parser must keep it.
_FIELD = r"[^<>|\n\"'`]*[^\W_][^<>|\n\"'`]*"
EXACT_ENTITY = re.compile(rf'\("entity"<\|>({_FIELD})<\|>({_FIELD})<\|>([^<>|\n]*)\)')
EXACT_RELATION = re.compile(
    rf'\("relationship"<\|>({_FIELD})<\|>({_FIELD})<\|>({_FIELD})<\|>([^<>|\n]*)'
    r"<\|>([^<>|\n]*)<\|>\s*(\d{1,2}(?:\.\d+)?)\s*\)"
)
HEADER_WORDS = {"name", "type", "description", "entity", "source", "target", "relationship"}


def load_pages() -> tuple[str, dict[str, bytes]]:
    """(where the pages came from, {file name: bytes}), read at test time, never copied."""
    pages = {}
    for name in PAGES:
        path = DOCS_DIR / name
        if path.is_file() and path.stat().st_size <= MAX_PAGE_BYTES:
            pages[name] = path.read_bytes()
    if len(pages) >= 3:
        return str(DOCS_DIR), pages
    return "the test's own text", {name: text.encode() for name, text in OWN_PAGES.items()}


def plain(name: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", name).split()).casefold()


def dropped_exact_records(reply: str) -> list[str]:
    """Lines of `reply` in the prompt's exact format that the parser did not keep."""
    parsed = parse_extraction_output(reply)
    if parsed.counts.get("truncated"):
        return []
    entities = {plain(e.name) for e in parsed.entities}
    relations = {(plain(r.source), plain(r.target)) for r in parsed.relations}
    dropped = []
    for line in reply.splitlines():
        line = line.strip()
        entity = EXACT_ENTITY.fullmatch(line)
        if entity:
            fields = [f.strip().casefold() for f in entity.groups()]
            if not set(fields) <= HEADER_WORDS and plain(entity.group(1)) not in entities:
                dropped.append(line)
            continue
        relation = EXACT_RELATION.fullmatch(line)
        if relation and (plain(relation.group(1)), plain(relation.group(2))) not in relations:
            dropped.append(line)
    return dropped


def cut(text: str, chars: int = SAMPLE_CHARS) -> str:
    return text if len(text) <= chars else text[:chars] + "…"


def summed(counts: list[dict[str, int]], keys: tuple[str, ...]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for c in counts:
        total.update({k: v for k, v in c.items() if k in keys})
    return dict(sorted(total.items()))


def build_report(
    *,
    server: LlamaServer,
    origin: str,
    source: Source,
    elapsed: float,
    parser_bugs: list[dict[str, str]],
) -> dict[str, Any]:
    workspace = source.workspace
    runs = list(ExtractionRun.objects.filter(workspace=workspace).order_by("created_at", "pk"))
    calls = list(LlmCall.objects.filter(workspace=workspace).order_by("created_at", "pk"))
    account = SourceExtraction.objects.filter(source=source).first()
    run_counts = [run.counts for run in runs]
    replies = [reply for run in runs for reply in run.raw_output]
    parsed = [parse_extraction_output(reply) for reply in replies]
    all_counts: Counter[str] = Counter()
    for c in run_counts:
        all_counts.update(c)
    validation = {
        k: v
        for k, v in sorted(all_counts.items())
        if k.startswith("rejected") or k in VALIDATION_DROPPED
    }
    problems: list[str] = []
    for run in runs:
        for problem in run.problems:
            if problem not in problems and len(problems) < 40:
                problems.append(problem)
    entities = Entity.objects.filter(workspace=workspace).select_related("type")
    return {
        "model": {
            "alias": server.model,
            "gguf": server.gguf.name,
            "gguf_bytes": server.gguf.stat().st_size,
            "chat_format": server.chat_format,
            "n_ctx": N_CTX,
            "threads": THREADS,
        },
        "settings": {
            "window_tokens": WINDOW_TOKENS,
            "max_completion_tokens": MAX_COMPLETION_TOKENS,
            "gleaning_passes": GLEANING_PASSES,
            "temperature": 0.0,
        },
        "pages_from": origin,
        "elapsed_seconds": round(elapsed, 1),  # informational only
        "documents": [
            {"path": d.path, "status": d.status, "error": cut(d.error, 300)}
            for d in Document.objects.filter(source=source).order_by("path")
        ],
        "extraction": {
            "status": extraction_status(account, source),
            "message": cut(account.message, 300) if account else "",
            "windows_extracted": account.windows_extracted if account else 0,
            "materialisation_counts": dict(sorted((account.counts or {}).items()))
            if account
            else {},
        },
        "calls": {
            "total": len(calls),
            "by_purpose": dict(Counter(c.purpose for c in calls)),
            "failed": sum(not c.ok for c in calls),
            "errors": sorted({cut(c.error, 300) for c in calls if not c.ok})[:5],
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
            "max_prompt_tokens": max((c.prompt_tokens for c in calls), default=0),
        },
        "runs": len(runs),
        "passes": dict(Counter(str(run.passes) for run in runs)),
        "replies": {
            "total": len(replies),
            "empty": sum(not r.strip() for r in replies),
            "without_any_record": sum(
                1 for p in parsed if not p.entities and not p.relations and not p.done
            ),
            "said_done": sum(1 for p in parsed if p.done),
            "lines": sum(p.counts["lines"] for p in parsed),
        },
        "recovered": {
            "entities_parsed": all_counts["entities"],
            "relations_parsed": all_counts["relations"],
            "entities_kept": sum(len(run.result.get("entities", [])) for run in runs),
            "relations_kept": sum(len(run.result.get("relations", [])) for run in runs),
            "gleaning_added": all_counts["gleaning_added"],
            "gleaning_stopped_early": all_counts["gleaning_stopped_early"],
        },
        "parser_rejected": summed(run_counts, PARSER_REJECTED),
        "parser_ignored": summed(run_counts, PARSER_IGNORED),
        "parser_repaired": summed(run_counts, PARSER_REPAIRED),
        "validation_rejected": validation,
        "parser_bugs": parser_bugs[:20],
        "graph": {
            "entities": entities.count(),
            "relations": Relation.objects.filter(workspace=workspace).count(),
            "mentions": Mention.objects.filter(workspace=workspace).count(),
            "entity_types": dict(Counter(e.type.name for e in entities).most_common()),
            "proposed_entity_types": sorted(
                EntityType.objects.filter(
                    workspace=workspace, status=TypeStatus.PROPOSED
                ).values_list("name", flat=True)
            ),
            "proposed_relation_types": sorted(
                RelationType.objects.filter(
                    workspace=workspace, status=TypeStatus.PROPOSED
                ).values_list("name", flat=True)
            ),
            "sample_entities": [f"{e.name} [{e.type.name}]" for e in entities[:15]],
        },
        "problem_samples": problems,
        # The first replies of different wording (a small model often repeats itself).
        "reply_samples": [cut(r) for r in dict.fromkeys(replies)][:6],
    }


def write_report(report: dict[str, Any]) -> None:
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    # ensure_ascii: the model's text is printed to a terminal; escape what it could hide.
    text = json.dumps(report, indent=2, ensure_ascii=True)
    REPORT_PATH.write_text(text + "\n")
    print(f"\n--- LLM tier report ({REPORT_PATH}) ---\n{text}")


def test_real_model_output_is_parsed_bounded_and_accounted_for(llama_server, tmp_path, settings):
    origin, pages = load_pages()
    # The blobs this process stores are the ones the worker reads.
    settings.MEDIA_ROOT = media_root = tmp_path / "media"
    workspace = do_create_workspace(slug="llm-tier")
    env = {
        "GRAPHLOOM_MEDIA_ROOT": str(media_root),
        "LLM_BASE_URL": llama_server.base_url,
        "LLM_MODEL": llama_server.model,
        "LLM_TEMPERATURE": "0",
        "LLM_MAX_TOKENS": str(MAX_COMPLETION_TOKENS),
        "LLM_TIMEOUT": "300",
        "LLM_MAX_RETRIES": "1",
        "LLM_RETRY_BASE_DELAY": "0.5",
        "LLM_CONCURRENCY": "1",  # the server answers one request at a time
        "EXTRACTION_OFFLINE": "0",
        "EXTRACTION_GLEANING_PASSES": str(GLEANING_PASSES),
        "EXTRACTION_WINDOW_TOKENS": str(WINDOW_TOKENS),
        "GRAPHLOOM_CHUNK_MAX_TOKENS": str(WINDOW_TOKENS),  # no chunk is a window of its own
        # The tier measures extraction: no LLM review or summaries after it.
        "CONSOLIDATION_LLM_BATCH": "0",
        "CONSOLIDATION_SUMMARY_FRAGMENTS": "0",
    }
    started = time.monotonic()
    worker = start_worker("llm-tier", **env)
    try:
        source, _ = do_create_upload_source(
            workspace=workspace,
            files=[(name, [data]) for name, data in pages.items()],
            name="LLM tier pages",
        )

        def finished() -> bool:
            if worker.poll() is not None:
                raise AssertionError(f"the worker exited with {worker.returncode}")
            crashed = DBTaskResult.objects.filter(status="FAILED").first()
            if crashed is not None:  # a crash, not a recorded failure: stop waiting
                raise AssertionError(f"a task crashed:\n{crashed.traceback[-3000:]}")
            status = Source.objects.values_list("status", flat=True).get(pk=source.pk)
            busy = DBTaskResult.objects.filter(status__in=["READY", "RUNNING"]).exists()
            return status in FINISHED_STATUSES and not busy

        # A crash or a hang still gets its report (below) before the test fails on it.
        pipeline_error = ""
        try:
            wait_for(finished, timeout=PIPELINE_TIMEOUT, what="the pipeline to finish the pages")
        except AssertionError as exc:
            pipeline_error = str(exc)
    finally:
        stop_process(worker, timeout=60)
    elapsed = time.monotonic() - started
    source.refresh_from_db()

    runs = list(ExtractionRun.objects.filter(workspace=workspace))
    parser_bugs = []
    for run in runs:
        for reply in run.raw_output:
            crashed = parse_extraction_output(reply).counts.get("internal_error")
            if crashed:
                parser_bugs.append({"kind": "internal_error", "reply": cut(reply)})
            parser_bugs += [
                {"kind": "exact_record_dropped", "line": cut(line, 400)}
                for line in dropped_exact_records(reply)
            ]
    report = build_report(
        server=llama_server, origin=origin, source=source, elapsed=elapsed,
        parser_bugs=parser_bugs,
    )  # fmt: skip
    report["pipeline_error"] = cut(pipeline_error, 3000)
    write_report(report)
    assert not pipeline_error, pipeline_error

    # --- the pipeline finished, or said clearly why not --------------------------------
    crashed_tasks = DBTaskResult.objects.filter(status="FAILED")
    assert not crashed_tasks.exists(), [t.traceback[-2000:] for t in crashed_tasks]
    documents = list(Document.objects.filter(source=source))
    assert len(documents) == len(pages)
    for document in documents:
        assert document.status in {DocumentStatus.DONE, DocumentStatus.FAILED}, document.path
        if document.status == DocumentStatus.FAILED:
            assert document.error.strip(), f"{document.path} failed without a reason"
            assert len(document.error) <= 2000
            assert "Traceback" not in document.error
    # The tier measured something: the model answered and its replies were kept.
    assert runs, f"no window was extracted: {report['documents']} {report['calls']}"
    assert all(run.extractor == "llm" and run.model == llama_server.model for run in runs)
    calls = LlmCall.objects.filter(workspace=workspace)
    assert calls.filter(ok=True, run__isnull=False).count() == sum(run.passes for run in runs)
    assert all(c.error.strip() for c in calls.filter(ok=False))

    # --- every run accounts for what the parser recovered and rejected ------------------
    assert not parser_bugs, parser_bugs[:5]
    for run in runs:
        assert 1 <= run.passes <= GLEANING_PASSES + 1
        assert len(run.raw_output) == run.passes
        assert all(isinstance(reply, str) for reply in run.raw_output)
        replies = [parse_extraction_output(reply) for reply in run.raw_output]
        for key in ("lines", "entities", "relations"):
            assert run.counts[key] == sum(p.counts[key] for p in replies), (key, run.counts)
        for p in replies:
            for key, value in p.counts.items():
                assert run.counts.get(key, 0) >= value, (key, run.counts)
        if any(run.counts.get(key) for key in NOTED) or run.counts.get("rejected"):
            assert run.problems, f"counts without a sample problem: {run.counts}"
        assert len(run.problems) <= MAX_PROBLEMS
        assert all(len(problem) <= PROBLEM_CHARS for problem in run.problems)
        for entity in run.result.get("entities", []):
            assert name_rejection_reason(entity["name"]) is None, entity
        kept = len(run.result.get("entities", []))
        assert kept <= run.counts["entities"]

    # --- nothing invalid reached the graph -------------------------------------------
    for entity in Entity.objects.filter(workspace=workspace).select_related("type"):
        assert len(entity.name) <= MAX_NAME_CHARS, entity.name
        assert name_rejection_reason(entity.name) is None, entity.name
        assert entity.type.status in {TypeStatus.ACTIVE, TypeStatus.PROPOSED}, entity.type.name
        if entity.type.status == TypeStatus.PROPOSED:
            assert entity.type.origin == TypeOrigin.MODEL, entity.type.name
        assert re.fullmatch(r"[a-z0-9_]{1,64}", entity.type.name), entity.type.name
    for relation in Relation.objects.filter(workspace=workspace).select_related("type"):
        assert relation.source_id != relation.target_id
        assert relation.type.status in {TypeStatus.ACTIVE, TypeStatus.PROPOSED}
        assert re.fullmatch(r"[a-z0-9_]{1,64}", relation.type.name), relation.type.name
    for mention in Mention.objects.filter(workspace=workspace).select_related("chunk__document"):
        if mention.char_start is not None:
            text = mention.chunk.document.text
            assert text[mention.char_start : mention.char_end] == mention.surface_form
