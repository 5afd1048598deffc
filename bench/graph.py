"""Graph backend benchmark (issue 7).

    .venv/bin/python bench/graph.py [--entities 100000] [--relations 1000000] [--queries 200]
                                    [--limit 500] [--seed 1] [--drop] [--settle 900]
                                    [--rounds 1] [--baseline FILE]

A synthetic workspace graph is loaded set-based (INSERT ... SELECT generate_series): power-law
out-degrees (a handful of hubs with thousands of relations, half the entities with a few),
uniform targets, the nine default relation types with skewed frequencies, distinct
(source, target, type) triples. It is kept between runs (the same size and seed reuse it;
`--drop` deletes it afterwards). The same graph is then loaded into networkx, the in-memory
baseline, and the same random queries run on both: neighbourhoods of 2 and 3 hops around
one seed with `--limit` nodes (the contract's semantics on both sides: nearest first, a cut
level keeps its highest-degree nodes, the edges among the nodes), and shortest paths
between random pairs with max_hops 4, 5, 6 (bidirectional BFS on both sides). Reported:
p50/p95 per query in ms, the ratio Postgres / networkx, how many answers were the same (a
correctness check at scale) and, when the server runs on this machine, the median CPU time the
server process spent per query (on a shared machine wall-clock times swing with the other
work, CPU time hardly), with the CPU time this process spent on it (the driver and the
answer's objects). `--rounds N` runs the same queries N times and summarises each figure
as its median over the rounds. Hubs and stats are timed once.
`--baseline FILE` (another version of knowledge/graph/postgres.py, e.g. the same file of an
older checkout) asks every query of that backend too, right before or after this one (order
drawn per query), and reports its figures, the ratio of the p50s and whether its answers
were the same field for field: a same-moment A/B of the Python side and the SQL it sends on
a shared machine (a schema change is compared by alternating whole runs instead).
Before measuring, the tables are VACUUMed: traversal reads covering indexes (the relation
indexes, `entity_active_walk`), which answer without the table only on all-visible pages. A
transaction left open in the database by another process keeps VACUUM from marking them, so
the script retries for up to `--settle` seconds and reports the all-visible shares it got.
Uses its own database (`graphloom_bench`) on the embedded server.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.bootstrap import run

    run("bench.graph_run")
