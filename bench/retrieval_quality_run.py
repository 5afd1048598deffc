"""The retrieval quality benchmark itself; run it through bench/retrieval_quality.py."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from io import StringIO
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command

from bench.cleanup import drop_workspace
from bench.doc_quality_run import drain
from ingest.actions.sources import FileInput, do_create_upload_source
from ingest.models import Chunk, Document
from knowledge.models import Entity, Relation
from knowledge.retrieval.evaluation import paired_difference, reciprocal_rank_of
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

SLUG = "python-docs-rq"
QUESTIONS = Path(__file__).resolve().parent / "data" / "python-docs-questions.jsonl"
# Written afterwards by someone else, frozen before it was first measured; nothing is tuned
# on it. It names only pages QUESTIONS and DISTRACTORS already bring into the workspace.
HELDOUT = Path(__file__).resolve().parent / "data" / "python-docs-questions-heldout.jsonl"
# Pages that answer none of the QUESTIONS: big reference pages, and neighbours of the
# answering ones, that share their words with many questions (distractors; some of them
# answer held-out questions).
DISTRACTORS = [
    "library/asyncio.html", "library/asyncio-eventloop.html", "library/asyncio-stream.html",
    "library/asyncio-sync.html", "library/codecs.html", "library/email.examples.html",
    "library/exceptions.html", "library/http.client.html", "library/io.html",
    "library/math.html", "library/operator.html", "library/shelve.html",
    "library/socketserver.html", "library/stdtypes.html", "tutorial/modules.html",
    "tutorial/stdlib2.html",
]  # fmt: skip


def answer_pages(questions: Path) -> set[str]:
    """The pages a questions file names as answers, or as required documents of a
    multi-hop question (their paths)."""
    return {
        answer
        for line in questions.read_text(encoding="utf-8").splitlines()
        if line.strip()
        for answer in _named(json.loads(line))
        if not answer.startswith("snippet:")
    }


def _named(question: dict[str, Any]) -> list[str]:
    return [*question.get("answers", []), *question.get("requires", [])]


def pages(*others: Path) -> list[str]:
    """The workspace's pages: those QUESTIONS names, the distractors, then any page the
    held-out set or `others` name that is not among them yet (none for the held-out set,
    so every question file is scored on the same workspace and the order stays stable)."""
    named = answer_pages(QUESTIONS)
    listed = sorted(named) + [p for p in DISTRACTORS if p not in named]
    extra = set().union(*(answer_pages(path) for path in (HELDOUT, *others))) - set(listed)
    return listed + sorted(extra)


def scored_questions(paths: list[Path]) -> Path:
    """The one questions file to score: the file itself, or several concatenated in order
    into a temporary file (lines numbered on from one file to the next)."""
    if len(paths) == 1:
        return paths[0]
    texts = [path.read_text(encoding="utf-8").strip("\n") for path in paths]
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", suffix=".jsonl", prefix="rq-questions-", delete=False
    ) as combined:
        combined.write("\n".join(texts) + "\n")
    return Path(combined.name)


def evaluate(paths: list[Path]) -> dict[str, Any]:
    """`manage.py eval_retrieval --json` on these questions files (as one set)."""
    questions = scored_questions(paths)
    figures = StringIO()
    try:
        call_command("eval_retrieval", str(questions), "--workspace", SLUG, "--json",
                     stdout=figures)  # fmt: skip
    finally:
        if questions not in paths:
            questions.unlink()
    return dict(json.loads(figures.getvalue()))


def build(root: Path, names: list[str]) -> tuple[Workspace, float]:
    """A fresh workspace with these pages uploaded and processed; the seconds it took."""
    old = Workspace.objects.filter(slug=SLUG).first()
    if old is not None:
        drop_workspace(old)
    workspace = do_create_workspace(slug=SLUG, name="Python 3.11 manual (retrieval quality)")
    files: list[FileInput] = [(page, [(root / page).read_bytes()]) for page in names]
    started = time.perf_counter()
    source, _ = do_create_upload_source(
        workspace=workspace, files=files, name="python3.11-doc", enqueue=False
    )
    drain(source)
    return workspace, time.perf_counter() - started


def size(workspace: Workspace) -> dict[str, int]:
    chunks = Chunk.objects.filter(workspace=workspace)
    return {
        "documents": Document.objects.filter(workspace=workspace).count(),
        "documents_failed": Document.objects.filter(workspace=workspace, status="failed").count(),
        "chunks": chunks.count(),
        "boilerplate_chunks": chunks.filter(boilerplate=True).count(),
        "entities": Entity.objects.filter(workspace=workspace, state="active").count(),
        "relations": Relation.objects.filter(workspace=workspace, state="active").count(),
    }


def retrieval_settings() -> dict[str, Any]:
    names = [name for name in dir(settings) if name.startswith("RETRIEVAL_")]
    return {name: getattr(settings, name) for name in names}


def table(report: dict[str, Any]) -> str:
    """The figures as the Markdown table docs/BENCHMARKS.md shows; with multi-hop questions
    in the set, their full- and partial-support recall@10 beside."""
    support = bool(report.get("multi_hop_questions"))
    head = "| ranking | hit@1 | hit@5 | MRR@10 | nDCG@10 |"
    lines = [
        head + (" full support@10 | partial support@10 |" if support else ""),
        "|---|---|---|---|---|" + ("---|---|" if support else ""),
    ]
    for r in report["rankings"]:
        line = (
            f"| {r['label']} | {r['hit_at_1']:.3f} | {r['hit_at_5']:.3f} "
            f"| {r['mrr_at_10']:.3f} | {r['ndcg_at_10']:.3f} |"
        )
        if support:
            line += (
                f" {r['full_support_recall_at_10']:.3f} | {r['partial_support_recall_at_10']:.3f} |"
            )
        lines.append(line)
    return "\n".join(lines)


def halves(report: dict[str, Any], split: bool = True) -> dict[str, Any]:
    """MRR@10 of each ranking and its paired margin over the best single signal on the
    odd-numbered lines of the questions file (where the fusion was tuned), the
    even-numbered ones (held out) and all of them; only on all of them unless `split`
    (the halves mean something for QUESTIONS alone)."""
    best = report["best_single_signal"]
    labels = [r["label"] for r in report["rankings"]]
    out: dict[str, Any] = {}
    parts = (("odd", 1), ("even", 0), ("all", None)) if split else (("all", None),)
    for half, parity in parts:
        rows = [q for q in report["per_question"] if parity is None or q["line"] % 2 == parity]
        rr = {
            label: [reciprocal_rank_of(q["first_relevant_rank"][label]) for q in rows]
            for label in labels
        }
        out[half] = {
            "questions": len(rows),
            "rankings": {
                label: {
                    "mrr_at_10": round(sum(rr[label]) / len(rows), 4),
                    **({} if label == best else paired_difference(rr[label], rr[best]).as_dict()),
                }
                for label in labels
            },
        }
    return out


def margins_table(report: dict[str, Any]) -> str:
    """Each ranking's MRR@10 and margin over the best single signal, per half, as Markdown."""
    lines = [
        f"| ranking | half | MRR@10 | vs {report['best_single_signal']} | 95 % CI "
        "| wins / ties / losses | clear |",
        "|---|---|---|---|---|---|---|",
    ]
    for label in [r["label"] for r in report["rankings"]]:
        for half in report["halves"]:
            figures = report["halves"][half]["rankings"][label]
            if "mean_difference" not in figures:
                lines.append(f"| {label} | {half} | {figures['mrr_at_10']:.3f} | | | | |")
                continue
            lines.append(
                f"| {label} | {half} | {figures['mrr_at_10']:.3f} "
                f"| {figures['mean_difference']:+.3f} "
                f"| [{figures['ci_low']:+.3f}, {figures['ci_high']:+.3f}] "
                f"| {figures['wins']} / {figures['ties']} / {figures['losses']} "
                f"| {'yes' if figures['clear'] else 'no'} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench/retrieval_quality.py")
    parser.add_argument("--root", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument(
        "--questions",
        type=Path,
        nargs="+",
        default=[QUESTIONS],
        help=f"questions file(s) to score, several scored as one set (held-out: {HELDOUT})",
    )
    parser.add_argument("--reuse", action="store_true", help="measure the workspace built before")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    names = pages(*args.questions)
    missing = [page for page in names if not (args.root / page).is_file()]
    if missing:
        raise SystemExit(f"{args.root}: {missing[0]} not found (apt-get install python3.11-doc)")
    call_command("migrate", verbosity=0)
    workspace = Workspace.objects.filter(slug=SLUG).first()
    seconds = None
    if workspace is None or not args.reuse:
        workspace, seconds = build(args.root, names)
    started = time.perf_counter()
    figures = evaluate(args.questions)
    measured = time.perf_counter() - started
    report = {
        "questions_files": [str(path) for path in args.questions],
        "pages": len(names),
        "ingest_seconds": round(seconds, 1) if seconds is not None else None,
        "evaluation_seconds": round(measured, 1),
        "workspace_size": size(workspace),
        "settings": retrieval_settings(),
        **figures,
    }
    report["halves"] = halves(report, split=[p.resolve() for p in args.questions] == [QUESTIONS])
    print(table(report))
    print(margins_table(report))
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
