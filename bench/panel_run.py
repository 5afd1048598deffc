"""The quality panel itself; run it through bench/panel.py."""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import random
import re
import subprocess
import tempfile
import time
from collections import Counter
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import call_command

from bench.cleanup import drop_workspace
from bench.doc_quality_run import drain, serve
from bench.panel_corpora import CORPORA, Corpus, corpus
from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import FileInput, do_create_upload_source
from ingest.embeddings import get_embedder
from ingest.models import Chunk, Document
from knowledge.extraction.offline import get_offline_extractor
from knowledge.models import Entity, Mention, Relation, RelationEvidence
from knowledge.retrieval.comparison import matching_documents, required_documents
from knowledge.retrieval.evaluation import (
    MULTI_HOP,
    SINGLE_PAGE,
    paired_difference,
    parse_question,
)
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

# The ranking a user gets without choosing: every signal, the graph at its default depth.
DEFAULT_RANKING = "hybrid+graph (hops 1)"
HUBS = 100
MISSING = "-"  # a figure not measured (yet)
SAMPLE = 60
SEED = 39
# Markdown escapes a converter leaves in prose (`\[`, `\_`, `\*` …) and emphasis wrapped
# around code (`` *`name`* ``): text a reader never sees on the page.
_ESCAPE = re.compile(r"\\[\[\]()#*_`<>{}|!.+-]|\*`|`\*")
_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench/panel.py", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("build", "retrieval", "pages"):
        sub = commands.add_parser(name)
        sub.add_argument("corpora", nargs="*")
        sub.add_argument("--split", choices=("tuning", "judged"))
        if name == "build":
            sub.add_argument("--profile", type=Path, help="write cProfile stats of each build")
    sample_parser = commands.add_parser("sample")
    sample_parser.add_argument("corpus")
    sample_parser.add_argument("--seed", type=int, default=SEED)
    table_parser = commands.add_parser("table")
    table_parser.add_argument("--split", choices=("tuning", "judged"))
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    if args.command == "sample":
        print(json.dumps(sample(corpus(args.corpus), seed=args.seed), indent=2))
        return
    if args.command == "table":
        panel = _chosen([], args.split)
        print(table(panel))
        print(json.dumps({"multi_hop_pooled": pooled_multi_hop(panel)}, indent=2))
        return
    for chosen in _chosen(args.corpora, args.split):
        if not chosen.root.exists():
            print(f"{chosen.name}: {chosen.root} is missing (apt-get install {chosen.package})")
            continue
        if args.command == "build" and args.profile:
            profiler = cProfile.Profile()
            result = profiler.runcall(build, chosen)
            profiler.dump_stats(args.profile.with_suffix(f".{chosen.name}.prof"))
        else:
            action = {"build": build, "retrieval": retrieval, "pages": pages}[args.command]
            result = action(chosen)
        print(json.dumps({chosen.name: result}, indent=2), flush=True)


def _chosen(names: list[str], split: str | None) -> list[Corpus]:
    picked = [corpus(name) for name in names] if names else list(CORPORA)
    return [c for c in picked if split is None or c.split == split]


def commit() -> str:
    """The commit measured, marked when the work tree differs from it."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return f"{head}+changes" if dirty else head


def slug(chosen: Corpus) -> str:
    return f"panel-{chosen.name}"


def _fresh_workspace(chosen: Corpus) -> Workspace:
    old = Workspace.objects.filter(slug=slug(chosen)).first()
    if old is not None:
        drop_workspace(old)
    return do_create_workspace(slug=slug(chosen), name=f"Panel: {chosen.name}")


def bring_in(chosen: Corpus, workspace: Workspace, *, process: bool = True) -> Any:
    """The corpus into the workspace as a user would bring it: crawled from a local
    http.server, or uploaded file by file; processed in this process (one worker's work)."""
    if chosen.kind == "files":
        files: list[FileInput] = [
            (name, [(chosen.root / name).read_bytes()]) for name in chosen.files
        ]
        source, _ = do_create_upload_source(
            workspace=workspace, files=files, name=chosen.name, enqueue=False
        )
    else:
        server = serve(chosen.root)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/{chosen.start}"
            config = validate_crawl_settings(
                url=url, mode="recursive", max_pages=chosen.max_pages, max_depth=100, rate=0,
                allow=chosen.allow,
            )  # fmt: skip
            source = do_create_crawl_source(workspace=workspace, crawl=config)
            do_start_crawl(source=source, enqueue=False)
            do_run_crawl(
                source_id=source.pk,
                process=(lambda ids: do_process_documents(document_ids=ids))
                if process
                else (lambda ids: None),
            )
        finally:
            server.shutdown()
    if process:
        drain(source)
    return source


def pages(chosen: Corpus) -> dict[str, Any]:
    """What a crawl of the corpus fetches, without processing it: pages.txt, for writing
    questions that only name pages the panel brings in."""
    workspace = _fresh_workspace(chosen)
    if chosen.kind == "files":
        listed = list(chosen.files)
    else:
        source = bring_in(chosen, workspace, process=False)
        listed = sorted(
            _page_path(p)
            for p in Document.objects.filter(source=source).values_list("path", flat=True)
        )
    chosen.data_dir.mkdir(parents=True, exist_ok=True)
    (chosen.data_dir / "pages.txt").write_text("\n".join(listed) + "\n", encoding="utf-8")
    drop_workspace(workspace)
    return {"pages": len(listed)}


def _page_path(url: str) -> str:
    """'http://127.0.0.1:8123/library/os.html' -> 'library/os.html'."""
    return re.sub(r"^[a-z]+://[^/]+/", "", url)


def build(chosen: Corpus) -> dict[str, Any]:
    """A fresh workspace with the corpus brought in; its figures, kept in figures.json."""
    get_embedder()
    get_offline_extractor()
    workspace = _fresh_workspace(chosen)
    started = time.perf_counter()
    source = bring_in(chosen, workspace)
    elapsed = time.perf_counter() - started
    figures = {
        "corpus": chosen.name,
        "generator": chosen.generator,
        "split": chosen.split,
        "commit": commit(),
        "workspace": workspace.slug,
        "documents": Document.objects.filter(source=source).count(),
        "documents_failed": Document.objects.filter(source=source, status="failed").count(),
        "seconds": round(elapsed, 1),
        **structure_figures(workspace),
        **graph_figures(workspace),
    }
    figures["chunks_per_s"] = round(figures["chunks"] / elapsed, 2) if elapsed else None
    _write(chosen, "figures.json", figures)
    return figures


def structure_figures(workspace: Workspace) -> dict[str, Any]:
    """How well the pages' structure came through: chunks with a heading path, chunks that
    hold only a heading (a page's title alone), chunks with markup escapes left in prose."""
    content = Chunk.objects.filter(workspace=workspace, boilerplate=False)
    rows = list(content.values_list("text", "heading_path"))
    headed = sum(1 for _, path in rows if path)
    alone = sum(1 for text, path in rows if _only_heading(text, path))
    escaped = sum(1 for text, _ in rows if _ESCAPE.search(_prose(text)))
    return {
        "chunks": Chunk.objects.filter(workspace=workspace).count(),
        "content_chunks": len(rows),
        "chunks_with_heading_path": round(headed / max(len(rows), 1), 3),
        "chunks_only_a_heading": alone,
        "chunks_with_markup_escapes": escaped,
    }


def _only_heading(text: str, path: list[str] | None) -> bool:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) != 1:
        return False
    line = lines[0].lstrip("#").strip()
    return lines[0].startswith("#") or line in (path or [])


def _prose(text: str) -> str:
    return _INLINE_CODE.sub(" ", _FENCE.sub(" ", text))


def graph_figures(workspace: Workspace) -> dict[str, Any]:
    entities = Entity.objects.filter(workspace=workspace, state="active")
    relations = Relation.objects.filter(workspace=workspace, state="active")
    total_entities, total_relations = entities.count(), relations.count()
    types = Counter(relations.values_list("type__name", flat=True))
    isolated = entities.filter(degree=0).count()
    once = entities.filter(mention_count__lte=1).count()
    return {
        "entities": total_entities,
        "relations": total_relations,
        "related_to_share": round(types.get("related_to", 0) / max(total_relations, 1), 3),
        "entities_without_relation": round(isolated / max(total_entities, 1), 3),
        "entities_seen_once": round(once / max(total_entities, 1), 3),
        "relation_types": dict(types.most_common(15)),
        "entity_types": dict(
            Counter(entities.values_list("type__name", flat=True)).most_common(12)
        ),
        "top_hubs": [
            f"{name} ({type_name}, {degree})"
            for name, type_name, degree in entities.order_by("-degree", "name").values_list(
                "name", "type__name", "degree"
            )[:30]
        ],
    }


def _workspace(chosen: Corpus) -> Workspace:
    found = Workspace.objects.filter(slug=slug(chosen)).first()
    if found is None:
        raise SystemExit(f"{chosen.name}: no workspace: run `panel.py build {chosen.name}` first")
    return found


def question_files(chosen: Corpus) -> list[Path]:
    """The corpus's labelled questions: questions.jsonl, and multihop.jsonl where the
    single-page questions came from elsewhere."""
    names = ("questions.jsonl", "multihop.jsonl")
    return [chosen.data_dir / name for name in names if (chosen.data_dir / name).exists()]


def retrieval(chosen: Corpus) -> dict[str, Any]:
    workspace = _workspace(chosen)
    files = question_files(chosen)
    if not files:
        return {"skipped": "no questions file"}
    combined, left_out = _answerable(_combined(files), workspace)
    out = StringIO()
    call_command(
        "eval_retrieval", str(combined), "--workspace", workspace.slug, "--json", stdout=out
    )
    report = dict(json.loads(out.getvalue()))
    summary = {
        "corpus": chosen.name,
        "commit": commit(),
        "questions_left_out": left_out,
        **summarise(report),
    }
    _write(chosen, "retrieval.json", {"summary": summary, "report": report})
    return summary


def _answerable(questions: Path, workspace: Workspace) -> tuple[Path, int]:
    """The questions whose pages the workspace holds (an "answers" locator: at least one;
    a "requires" entry: each), and how many were left out: a corpus whose cap came down
    after its questions were written keeps the questions about the pages it still brings
    in. Entries match documents as eval_retrieval matches them
    (`comparison.matching_documents`). Nobody reads the questions to do this."""
    lines = [line for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept: list[str] = []
    for number, line in enumerate(lines, start=1):
        question = parse_question(json.loads(line), number)
        pages = not question.locators or matching_documents(workspace.pk, question.locators, ())
        if pages and all(required_documents(workspace.pk, question)):
            kept.append(line)
    if len(kept) == len(lines):
        return questions, 0
    handle, name = tempfile.mkstemp(prefix="panel-answerable-", suffix=".jsonl")
    os.close(handle)
    Path(name).write_text("\n".join(kept) + "\n", encoding="utf-8")
    return Path(name), len(lines) - len(kept)


def _combined(files: list[Path]) -> Path:
    if len(files) == 1:
        return files[0]
    handle, name = tempfile.mkstemp(prefix="panel-questions-", suffix=".jsonl")
    os.close(handle)
    path = Path(name)
    path.write_text(
        "\n".join(f.read_text(encoding="utf-8").strip("\n") for f in files) + "\n",
        encoding="utf-8",
    )
    return path


def summarise(report: dict[str, Any]) -> dict[str, Any]:
    """The panel's retrieval figures out of eval_retrieval's JSON: the default ranking on the
    single-page questions and its margin over their best single signal; on the multi-hop
    questions, full-support recall@10 of each ranking and the default's margin over hybrid
    (the fusion without the graph)."""
    kinds = report.get("by_kind", {})
    single = {r["label"]: r for r in kinds.get(SINGLE_PAGE, [])}
    default = single.get(DEFAULT_RANKING, {})
    by_kind = report.get("margins_by_kind", {})
    margins = {m["label"]: m for m in by_kind.get(SINGLE_PAGE, report.get("margins", []))}
    multi = {r["label"]: r for r in kinds.get(MULTI_HOP, [])}
    support = {m["label"]: m for m in report.get("full_support_margins", [])}
    return {
        "questions": report.get("questions"),
        "single_page": {
            "questions": report.get("single_page_questions"),
            "hit_at_1": default.get("hit_at_1"),
            "hit_at_5": default.get("hit_at_5"),
            "mrr_at_10": default.get("mrr_at_10"),
            "default_vs_best_single_lower": (margins.get(DEFAULT_RANKING) or {}).get("ci_low"),
            "mrr_by_ranking": {label: r.get("mrr_at_10") for label, r in single.items()},
        },
        "multi_hop": {
            "questions": report.get("multi_hop_questions"),
            "full_support_by_ranking": {
                label: r.get("full_support_recall_at_10") for label, r in multi.items()
            },
            "graph_vs_hybrid": support.get(DEFAULT_RANKING),
        },
    }


def sample(chosen: Corpus, *, seed: int) -> dict[str, Any]:
    """The labelling files: top hubs, random entities, random relations with the sentence
    that states each; labels already given to the same row are kept."""
    workspace = _workspace(chosen)
    entities = Entity.objects.filter(workspace=workspace, state="active")
    hubs = [_entity_row(e) for e in entities.order_by("-degree", "name")[:HUBS]]
    ids = sorted(entities.values_list("pk", flat=True))
    picked = random.Random(seed).sample(ids, min(SAMPLE, len(ids)))
    randoms = [_entity_row(e) for e in entities.filter(pk__in=picked).order_by("name")]
    relation_ids = sorted(
        Relation.objects.filter(workspace=workspace, state="active").values_list("pk", flat=True)
    )
    chosen_relations = random.Random(seed).sample(relation_ids, min(SAMPLE, len(relation_ids)))
    relations = [_relation_row(pk) for pk in chosen_relations]
    counts = {}
    for name, rows, keys in (
        ("hubs.jsonl", hubs, ("name", "type")),
        ("entities.jsonl", randoms, ("name", "type")),
        ("relations.jsonl", relations, ("source", "type", "target")),
    ):
        counts[name] = _write_sample(chosen.data_dir / name, rows, keys)
    return {"commit": commit(), "seed": seed, "written": counts}


def _entity_row(entity: Entity) -> dict[str, Any]:
    mention = (
        Mention.objects.filter(entity=entity)
        .select_related("chunk__document")
        .order_by("pk")
        .first()
    )
    return {
        "name": entity.name,
        "type": entity.type.name,
        "degree": entity.degree,
        "mentions": entity.mention_count,
        "context": _context(
            mention.chunk.text, mention.char_start, mention.char_end, mention.chunk.char_start
        )
        if mention and mention.chunk_id
        else "",
        "page": _page_path(mention.chunk.document.path) if mention and mention.chunk_id else "",
        "name_ok": None,
        "type_ok": None,
    }


def _relation_row(pk: int) -> dict[str, Any]:
    relation = Relation.objects.select_related("source", "target", "type").get(pk=pk)
    evidence = (
        RelationEvidence.objects.filter(relation=relation)
        .select_related("chunk__document")
        .order_by("pk")
        .first()
    )
    sentence, page = "", ""
    if evidence is not None and evidence.chunk_id:
        sentence = _context(
            evidence.chunk.text, evidence.char_start, evidence.char_end, evidence.chunk.char_start
        )
        page = _page_path(evidence.chunk.document.path)
    return {
        "source": relation.source.name,
        "type": relation.type.name,
        "target": relation.target.name,
        "evidence": sentence or relation.description[:400],
        "page": page,
        "stated_ok": None,
        "type_ok": None,
    }


def _context(text: str, start: int | None, end: int | None, offset: int) -> str:
    """The sentence(s) of a chunk around a span given in document characters."""
    if start is None or end is None:
        return text[:300]
    lo, hi = max(start - offset, 0), min(end - offset, len(text))
    left = text.rfind("\n", 0, lo)
    right = text.find("\n", hi)
    piece = text[left + 1 : right if right >= 0 else len(text)]
    return re.sub(r"\s+", " ", piece).strip()[:400]


def _write_sample(path: Path, rows: list[dict[str, Any]], keys: tuple[str, ...]) -> int:
    """Write rows, keeping the labels an earlier file gave to a row with the same keys."""
    known: dict[tuple[Any, ...], dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                known[tuple(row.get(k) for k in keys)] = row
    for row in rows:
        old = known.get(tuple(row.get(k) for k in keys))
        if old:
            row.update({k: v for k, v in old.items() if k.endswith("_ok") or k == "note"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return len(rows)


def labelled(chosen: Corpus) -> dict[str, Any]:
    """Precision figures from the labelled samples (rows whose labels are filled in)."""
    out: dict[str, Any] = {}
    for name, ok in (("hubs", "name_ok"), ("entities", "name_ok"), ("relations", "stated_ok")):
        path = chosen.data_dir / f"{name}.jsonl"
        if not path.exists():
            continue
        rows = [
            json.loads(line)
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        done = [r for r in rows if r.get(ok) is not None]
        if not done:
            continue
        good = [r for r in done if r[ok]]
        typed = [r for r in good if r.get("type_ok") is not None]
        out[name] = {
            "labelled": len(done),
            "precision": round(len(good) / len(done), 3),
            "type_precision": round(sum(1 for r in typed if r["type_ok"]) / max(len(typed), 1), 3),
        }
        if name == "hubs":
            out[name]["junk"] = len(done) - len(good)
    return out


def table(chosen: list[Corpus]) -> str:
    """One line per corpus: the stored figures and the labelled samples' precision."""
    head = (
        "| corpus | split | generator | commit | docs | chunks | chunks/s | headed | alone "
        "| escapes | entities | related_to | no relation | hub name | hub junk | hub type "
        "| entity name | entity type | relation stated | relation type | hit@1 | hit@5 | MRR@10 "
        "| vs best single (low) "
        "| multi-hop full support: hybrid / +graph (low) |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for c in chosen:
        f = _read(c, "figures.json")
        r = (_read(c, "retrieval.json") or {}).get("summary", {})
        lab = labelled(c)
        s, m = r.get("single_page", {}), r.get("multi_hop", {})
        support = m.get("full_support_by_ranking", {})
        margin = m.get("graph_vs_hybrid") or {}
        cells = [
            c.name, c.split, c.generator,
            *(f.get(key, MISSING) for key in _FIGURES),
            _get(lab, "hubs", "precision"), _get(lab, "hubs", "junk"),
            _get(lab, "hubs", "type_precision"),
            _get(lab, "entities", "precision"), _get(lab, "entities", "type_precision"),
            _get(lab, "relations", "precision"), _get(lab, "relations", "type_precision"),
            _num(s.get("hit_at_1")), _num(s.get("hit_at_5")), _num(s.get("mrr_at_10")),
            _num(s.get("default_vs_best_single_lower")),
            f"{_num(support.get('hybrid'))} / {_num(support.get(DEFAULT_RANKING))} "
            f"({_num(margin.get('ci_low'))})",
        ]  # fmt: skip
        lines.append("| " + " | ".join(str(x) for x in cells) + " |")
    return "\n".join(lines)


def pooled_multi_hop(chosen: list[Corpus]) -> dict[str, Any]:
    """Full-support recall@10 on every corpus's multi-hop questions taken together: the
    default ranking against hybrid without the graph, question by question, with the paired
    bootstrap interval (the goal: its lower bound above 0)."""
    graph: list[float] = []
    hybrid: list[float] = []
    for c in chosen:
        report = (_read(c, "retrieval.json") or {}).get("report", {})
        for row in report.get("per_question", []):
            support = row.get("full_support_recall_at_10")
            if support and DEFAULT_RANKING in support and "hybrid" in support:
                graph.append(float(support[DEFAULT_RANKING]))
                hybrid.append(float(support["hybrid"]))
    if not graph:
        return {"questions": 0}
    return {
        "questions": len(graph),
        "hybrid": round(sum(hybrid) / len(hybrid), 3),
        DEFAULT_RANKING: round(sum(graph) / len(graph), 3),
        "difference": paired_difference(graph, hybrid).as_dict(),
    }


_FIGURES = (
    "commit", "documents", "chunks", "chunks_per_s", "chunks_with_heading_path",
    "chunks_only_a_heading", "chunks_with_markup_escapes", "entities", "related_to_share",
    "entities_without_relation",
)  # fmt: skip


def _get(lab: dict[str, Any], sample_name: str, key: str) -> Any:
    return lab.get(sample_name, {}).get(key, MISSING)


def _num(value: Any) -> str:
    return MISSING if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _read(chosen: Corpus, name: str) -> dict[str, Any]:
    path = chosen.data_dir / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _write(chosen: Corpus, name: str, data: dict[str, Any]) -> None:
    chosen.data_dir.mkdir(parents=True, exist_ok=True)
    (chosen.data_dir / name).write_text(
        json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
