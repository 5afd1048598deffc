"""The ingestion benchmark itself; run it through bench/ingest.py (see there)."""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import docx
import psutil
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from bench.cleanup import drop_workspace
from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import (
    PENDING,
    do_add_file,
    do_create_source,
    do_reingest_source,
    do_start_source,
)
from ingest.embeddings import get_embedder
from ingest.models import Chunk, Document, Source
from tests.ingest.factories import pdf_bytes
from workspaces.actions.workspaces import do_create_workspace

ROOT = Path(__file__).resolve().parent.parent


WORDS = [
    "graph",
    "entity",
    "relation",
    "evidence",
    "harbour",
    "crane",
    "pilot",
    "storm",
    "repair",
    "policy",
    "budget",
    "council",
    "river",
    "bridge",
    "engineer",
    "sensor",
    "network",
    "model",
    "vector",
    "index",
    "query",
    "document",
    "chapter",
    "source",
    "archive",
    "museum",
    "painter",
    "theory",
    "experiment",
    "protein",
    "enzyme",
    "climate",
    "ocean",
    "forest",
    "market",
    "contract",
    "supplier",
    "factory",
    "schedule",
    "railway",
    "station",
    "signal",
    "library",
    "student",
    "teacher",
]


def paragraph(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(9, 18))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def document_text(
    rng: random.Random, n: int, sections: int
) -> tuple[str, list[tuple[str, list[str]]]]:
    parts = [
        (f"Section {n}.{s} {rng.choice(WORDS)}", [paragraph(rng, 8) for _ in range(3)])
        for s in range(sections)
    ]
    return f"Report {n} on {rng.choice(WORDS)}", parts


def render(kind: str, title: str, parts: list[tuple[str, list[str]]]) -> tuple[str, bytes]:
    if kind == "md":
        body = "\n\n".join(f"## {h}\n\n" + "\n\n".join(ps) for h, ps in parts)
        return "md", f"# {title}\n\n{body}\n".encode()
    if kind == "txt":
        return "txt", (
            title + "\n\n" + "\n\n".join(h + "\n\n" + "\n\n".join(ps) for h, ps in parts)
        ).encode()
    if kind == "html":
        body = "".join(f"<h2>{h}</h2>" + "".join(f"<p>{p}</p>" for p in ps) for h, ps in parts)
        page = (
            f"<!doctype html><html><head><title>{title}</title></head>"
            f"<body><article><h1>{title}</h1>{body}</article></body></html>"
        )
        return "html", page.encode()
    if kind == "json":
        record = {"title": title, "sections": [{"heading": h, "paragraphs": ps} for h, ps in parts]}
        return "json", json.dumps(record).encode()
    if kind == "docx":
        document = docx.Document()
        document.add_heading(title, level=0)
        for h, ps in parts:
            document.add_heading(h, level=1)
            for p in ps:
                document.add_paragraph(p)
        buffer = io.BytesIO()
        document.save(buffer)
        return "docx", buffer.getvalue()
    if kind == "pdf":
        pages = []
        for h, ps in parts:
            lines = [h]
            for p in ps:
                words, line = p.split(), ""
                for w in words:
                    if len(line) + len(w) > 90:
                        lines.append(line)
                        line = ""
                    line = f"{line} {w}".strip()
                lines.append(line)
                lines.append("")
            pages.append("\n".join(lines))
        return "pdf", pdf_bytes(pages, title=title)
    raise ValueError(kind)


def corpus(docs: int, seed: int = 7) -> dict[str, bytes]:
    rng = random.Random(seed)
    kinds = ["md", "txt", "html", "json", "md", "txt", "html", "pdf", "docx", "md"]
    files = {}
    for n in range(docs):
        title, parts = document_text(rng, n, sections=14)
        extension, data = render(kinds[n % len(kinds)], title, parts)
        files[f"doc-{n:03}.{extension}"] = data
    return files


def process_all(source: Source) -> None:
    """What the workers do, in this process: groups of INGEST_DOCUMENTS_PER_TASK documents,
    then those sent round again meanwhile (documents chunked before the text they share
    with later ones was known to repeat: ingest/actions/boilerplate.py)."""
    size = settings.INGEST_DOCUMENTS_PER_TASK
    for _ in range(3):
        ids = list(
            Document.objects.filter(source=source, status__in=PENDING).values_list("pk", flat=True)
        )
        for start in range(0, len(ids), size):
            do_process_documents(document_ids=ids[start : start + size])


def postgres_cpu_s() -> float:
    """CPU seconds the database server's processes have used (the embedded server runs on
    this machine: its work competes with the model for the same cores)."""
    total = 0.0
    for process in psutil.process_iter(["name"]):
        try:
            if (process.info["name"] or "").startswith("postgres"):
                times = process.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            continue
    return total


def own_cpu_s() -> float:
    """CPU seconds of this process (every thread: the model's, the lane's) and of its live
    children (the parser's)."""
    me = psutil.Process()
    times = me.cpu_times()
    total = times.user + times.system
    for child in me.children(recursive=True):
        try:
            times = child.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            continue
    return total


def thread_scaling(texts: list[str]) -> dict[str, float]:
    """The model alone on `texts` with one torch thread, then with as many as there are
    cores: how much of a second core the model turns into speed. What the model gives up
    when it shares the cores with other work is bounded by this."""
    import torch

    embedder, threads, seconds = get_embedder(), torch.get_num_threads(), {}
    try:
        for count in (1, psutil.cpu_count() or 1):
            torch.set_num_threads(count)
            started = time.perf_counter()
            embedder.encode(texts)
            seconds[count] = time.perf_counter() - started
    finally:
        torch.set_num_threads(threads)
    one, many = seconds[1], seconds[max(seconds)]
    return {"texts": len(texts), "one_thread_s": one, "all_cores_s": many, "speedup": one / many}


def data_parallel(texts: list[str]) -> dict[str, float]:
    """The model alone on `texts` two ways: one process with one torch thread per core (as
    the pipeline and the ratio's baseline run it), then one process per core with one
    thread each, every process encoding an equal share (every n-th text), started together.
    If the cores gave more to processes side by side than to threads, the pipeline could
    embed in several processes and leave the model's own baseline behind."""
    import multiprocessing

    from bench.encode_share import encode_share

    cores = psutil.cpu_count() or 1
    started = time.perf_counter()
    get_embedder().encode(texts)
    threads_s = time.perf_counter() - started
    context = multiprocessing.get_context("spawn")
    ready, go, seconds = context.Queue(), context.Event(), context.Queue()
    shares = [texts[i::cores] for i in range(cores)]
    processes = [
        context.Process(target=encode_share, args=(share, 1, ready, go, seconds))
        for share in shares
    ]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=300)
    started = time.perf_counter()
    go.set()
    share_s = [seconds.get(timeout=3600) for _ in processes]
    processes_s = time.perf_counter() - started
    for process in processes:
        process.join()
    return {
        "texts": len(texts),
        "processes": cores,
        "one_process_s": threads_s,
        "processes_s": processes_s,
        "slowest_share_s": max(share_s),
        "gain": threads_s / processes_s,
    }


def one_run(
    run: int, files: dict[str, bytes], keep_texts: list[str] | None = None
) -> dict[str, float]:
    workspace = do_create_workspace(slug=f"bench-{os.getpid()}-{run}-{int(time.time())}")
    embedder = get_embedder()

    encoded_at_start = embedder.texts_encoded
    cpu_at_start, postgres_at_start = own_cpu_s(), postgres_cpu_s()
    started = time.perf_counter()
    source = do_create_source(workspace=workspace, kind="upload", name="bench")
    for path, data in files.items():
        do_add_file(source=source, path=path, chunks=[data])
    do_start_source(source=source, enqueue=False)
    process_all(source)
    first = time.perf_counter() - started
    cpu, postgres = own_cpu_s() - cpu_at_start, postgres_cpu_s() - postgres_at_start

    source.refresh_from_db()
    assert source.status == "done", (source.status, source.counters)
    chunks = source.counters["chunks"]
    # More than `chunks` would be waste: a chunk embedded twice (the boilerplate pass sends
    # documents round again; their unchanged chunks keep their vectors).
    embedded = embedder.texts_encoded - encoded_at_start
    texts = list(
        Chunk.objects.filter(document__source=source).order_by("id").values_list("text", flat=True)
    )

    cpu_at_start = own_cpu_s()
    if keep_texts is not None:
        keep_texts[:] = texts
    started = time.perf_counter()
    embedder.encode(texts)
    encode_only = time.perf_counter() - started
    encode_cpu = own_cpu_s() - cpu_at_start
    cores = psutil.cpu_count() or 1

    encoded_before = embedder.texts_encoded
    started = time.perf_counter()
    for path, data in files.items():
        do_add_file(source=source, path=path, chunks=[data])
    do_reingest_source(source=source, enqueue=False)
    process_all(source)
    again = time.perf_counter() - started
    assert embedder.texts_encoded == encoded_before, "re-ingest embedded something"
    # Its chunks would stay in the shared vector and text indexes of graphloom_bench and
    # slow the other benchmarks' searches (bench/retrieval.py) down.
    drop_workspace(workspace)

    return {
        "documents": len(files),
        "chunks": chunks,
        "texts_embedded": embedded,
        "first_s": first,
        "docs_per_s": len(files) / first,
        "chunks_per_s": chunks / first,
        "encode_only_s": encode_only,
        "encode_chunks_per_s": chunks / encode_only,
        "pipeline_vs_encode": encode_only / first,
        # Where the cores went. The model alone keeps every core busy, so the pipeline can
        # only reach the ratio its CPU allows: the last figure, the ratio if no core ever
        # waited (see docs/BENCHMARKS.md).
        "pipeline_cpu_s": cpu,
        "postgres_cpu_s": postgres,
        "encode_cpu_s": encode_cpu,
        "cores": cores,
        "ratio_if_cores_always_busy": encode_only * cores / max(cpu + postgres, 1e-9),
        "reingest_s": again,
        "reingest_fraction": again / first,
    }


def big_pdf(target_bytes: int) -> bytes:
    """A text PDF of about `target_bytes` (uncompressed content streams, many pages)."""
    rng = random.Random(11)
    line = " ".join(rng.choice(WORDS) for _ in range(14))
    page = "\n".join(f"{i} {line}" for i in range(46))
    one = len(pdf_bytes([page]))
    pages = max(1, target_bytes // max(one - 600, 1))
    return pdf_bytes([page] * pages, title="Big")


def worker_peak_rss(pdf: bytes) -> dict[str, float]:
    """Run a real worker on a source holding `pdf`; sample its and its children's RSS."""
    workspace = do_create_workspace(slug=f"bench-pdf-{os.getpid()}-{int(time.time())}")
    source = do_create_source(workspace=workspace, kind="upload", name="big pdf")
    do_add_file(source=source, path="big.pdf", chunks=[pdf])
    env = {**os.environ, "GRAPHLOOM_WORKER_HEARTBEAT_SECONDS": "1"}
    worker = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "worker", "--no-reload", "--interval", "0.2"],
        env=env,
        cwd=ROOT,
    )
    peak_worker = peak_child = 0
    started = time.perf_counter()
    try:
        proc = psutil.Process(worker.pid)
        do_start_source(source=source)
        connection.close()
        while True:
            try:
                peak_worker = max(peak_worker, proc.memory_info().rss)
                for child in proc.children(recursive=True):
                    peak_child = max(peak_child, child.memory_info().rss)
            except psutil.NoSuchProcess:
                pass
            source.refresh_from_db()
            if source.status not in {"queued", "running"}:
                break
            if time.perf_counter() - started > 1800:
                raise RuntimeError("the 50 MB PDF did not finish in 30 minutes")
            time.sleep(0.2)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=120)
    document = Document.objects.get(source=source)
    return {
        "pdf_mb": len(pdf) / 1e6,
        "status": document.status,
        "error": document.error,
        "pages": document.metadata.get("page_count"),
        "truncated": bool(document.metadata.get("truncated")),
        "chunks": source.counters.get("chunks", 0),
        "seconds": time.perf_counter() - started,
        "worker_peak_rss_mb": peak_worker / 1e6,
        "parser_child_peak_rss_mb": peak_child / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Ingestion benchmark; see bench/ingest.py.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--skip-pdf", action="store_true")
    parser.add_argument("--pdf-mb", type=float, default=50)
    parser.add_argument(
        "--stages",
        choices=["ingest", "all"],
        default="ingest",
        help="ingest: parse, chunk, embed (what the ratio to the model alone measures); "
        "all: INGEST_PIPELINE_STAGES as configured (extraction too: see bench/doc_quality.py)",
    )
    parser.add_argument("--profile", help="write a cProfile of the runs to this file")
    parser.add_argument(
        "--thread-scaling",
        action="store_true",
        help="then time the model alone on the last run's chunks with one torch thread and "
        "with one per core",
    )
    parser.add_argument(
        "--data-parallel",
        action="store_true",
        help="then time the model alone on the last run's chunks in one process on every "
        "core, and in one single-threaded process per core, each with a share",
    )
    args = parser.parse_args()
    if args.stages == "ingest":
        settings.INGEST_PIPELINE_STAGES = [
            stage for stage in settings.INGEST_PIPELINE_STAGES if stage.startswith("ingest.")
        ]
    profiler = cProfile.Profile() if args.profile else None

    call_command("migrate", verbosity=0)
    files = corpus(args.docs)
    print(
        f"corpus: {len(files)} files, {sum(len(b) for b in files.values()) / 1e6:.1f} MB",
        flush=True,
    )
    get_embedder().encode(["warm up"])  # model load is not part of the throughput

    runs: list[dict[str, float]] = []
    texts: list[str] = []
    for run in range(args.runs):
        if profiler is not None:
            profiler.enable()
        result = one_run(run, files, texts)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
        runs.append(result)
        print(json.dumps({"run": run, **{k: round(v, 3) for k, v in result.items()}}), flush=True)
    if runs:
        summary = {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
        print("median:", json.dumps(summary), flush=True)
    if args.thread_scaling and texts:
        scaling = {k: round(v, 3) for k, v in thread_scaling(texts).items()}
        print(json.dumps({"thread_scaling": scaling}), flush=True)
    if args.data_parallel and texts:
        parallel = {k: round(v, 3) for k, v in data_parallel(texts).items()}
        print(json.dumps({"data_parallel": parallel}), flush=True)

    if not args.skip_pdf:
        pdf = big_pdf(int(args.pdf_mb * 1e6))
        print(json.dumps({"big_pdf": worker_peak_rss(pdf)}), flush=True)
