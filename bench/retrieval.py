"""Hybrid retrieval benchmark (issue 7).

    .venv/bin/python bench/retrieval.py [--chunks 100000] [--entities 50000] [--queries 200]
                                        [--limit 10] [--hops 1 2] [--keep] [--reuse]
    .venv/bin/python bench/retrieval.py --reuse --ab /tmp/base-checkout [--rounds 5]

A workspace is filled with `--chunks` chunks of synthetic text (words drawn with a Zipf
law from the ~20k English words of the embedding model's vocabulary, so the tsvector, the
stemmer and the stopwords see real words, common and rare), each with a random unit vector
of the real dimension (384, stored under the model's id so the vector signal compares with
it), and `--entities` entities (generated names of people, organisations, places and
products, with name vectors and some aliases); each chunk names one to four entities
(popularity is a power law: a few hubs are in thousands of chunks), and those become
mentions; entities named together become relations with evidence. Then `--queries` queries
(entity questions, keyword queries, natural-language questions, pairs of entities) run
through `knowledge.retrieval.hybrid_search` with access recording on, as the API calls it.

The query embedding is computed once per query outside the timer (the packaged model when
it loads, else a random vector). Reported as JSON: latency p50 / p95 / p99 / max per hops
setting (goal: p95 <= 50 ms), each stage's p50 / p95 (vector, keyword, recognition, graph,
fusion, hydrate, paths, access, context), and how often each signal contributed. Uses its
own database (`graphloom_bench`) on the embedded server; `--keep` leaves the workspace for a
later `--reuse` run (loading 100k chunks takes minutes).

`--ab DIR` compares this checkout with another one (say a `git worktree` of an older
commit) in the same run, on the same workspace and the same queries: `--rounds` rounds,
each measuring both sides in a fresh process (the order alternating), then the per-run
p50 / p95, their medians and the ratio. Both sides run this file's measuring code; only
the code searched with (`knowledge`, settings, ...) comes from DIR, so an older checkout
whose own benchmark no longer fits the schema can still be measured. The database is this
checkout's, migrated by it.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _code_root(argv: list[str]) -> Path:
    """The checkout whose code is searched with: `--code DIR` (one side of `--ab`), else
    this one."""
    if "--code" in argv[:-1]:
        return Path(argv[argv.index("--code") + 1]).resolve()
    return HERE


def _this_run_module() -> None:
    """This checkout's retrieval_run, loaded by path once Django is set up (the package
    `bench` may be another checkout's, see `--code`), then its main()."""
    spec = importlib.util.spec_from_file_location(
        "bench.retrieval_run", HERE / "bench" / "retrieval_run.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.main()


if __name__ == "__main__":
    sys.path.insert(0, str(_code_root(sys.argv)))
    from bench.bootstrap import run

    shim = types.ModuleType("bench_retrieval_main")
    shim.main = _this_run_module  # type: ignore[attr-defined]
    sys.modules[shim.__name__] = shim
    run(shim.__name__)
