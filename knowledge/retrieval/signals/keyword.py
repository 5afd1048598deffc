"""The keyword signal: `websearch_to_tsquery('english', q)` over the chunks' generated
tsvector (GIN), ranked by `ts_rank_cd` in tiers: every term, at least two, any (a question
rarely has all its words in one chunk), each tier ranking a bounded number of its matches.

It is the heaviest statement of a search, so the search runs it on the retrieval pool
(knowledge/retrieval/pool.py) while the other signals run.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import connection

from knowledge.retrieval.signals.scope import DocumentScope, scope_clause

# Terms of the query used for the relaxed tiers, and the matches of one tier that are
# ranked at most (a common word is in a large share of the chunks).
KEYWORD_MAX_TERMS = 8
KEYWORD_SCAN_LIMIT = 500

_LEXEME = re.compile(r"'(?:[^']|'')+'")
_CONJUNCTION = re.compile(r"'(?:[^']|'')+'(?: & '(?:[^']|'')+')*")


def _keyword_tiers(text: str) -> list[str]:
    """The tsqueries of the keyword tiers, strictest first (as tsquery text): every term
    (the websearch query itself), at least two of its terms (OR of pairs, for three terms
    or more), any term. A query with exclusions (`-word`) is taken as written: strict
    only. Empty when nothing in it is indexable (stopwords only)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT q::text, querytree(q) FROM websearch_to_tsquery('english', %s) AS q", [text]
        )
        row = cursor.fetchone()
    if row is None or row[1] in ("", "T"):
        return []
    strict, indexable = str(row[0]), str(row[1])
    if "!" in strict:
        return [strict]
    if not _CONJUNCTION.fullmatch(indexable):  # phrases or "or": relax by OR-ing its parts
        loose = indexable.replace(" & ", " | ")
        return [strict] if loose == strict else [strict, loose]
    lexemes = list(dict.fromkeys(_LEXEME.findall(indexable)))[:KEYWORD_MAX_TERMS]
    tiers = [strict]
    if len(lexemes) >= 3:
        pairs = [f"{a} & {b}" for i, a in enumerate(lexemes) for b in lexemes[i + 1 :]]
        tiers.append(" | ".join(f"( {p} )" for p in pairs))
    if len(lexemes) >= 2:
        tiers.append(" | ".join(lexemes))
    return tiers


def keyword_signal(
    workspace_id: int, text: str, candidates: int, scope: DocumentScope | None
) -> list[tuple[int, float]]:
    """(chunk id, score), best first, by tiers: chunks matching the whole websearch query
    (every term, phrases, exclusions), then those matching at least two of its terms, then
    any of them — a question rarely has all its words in one chunk. Within a tier, by
    `ts_rank_cd` against the any-term query; the score is that plus 1 per tier above the
    last, so it falls with the rank.

    One statement: each tier is a branch of a UNION ALL under the final LIMIT, so a tier
    runs only when the ones before it found too few, and each ranks at most
    KEYWORD_SCAN_LIMIT of its matches (the first the GIN bitmap yields): ranking every
    chunk that contains a common word would cost time in proportion to the corpus."""
    tiers = _keyword_tiers(text)
    if not tiers:
        return []
    ranking = tiers[-1]
    branches = []
    params: list[Any] = []
    for n, tier in enumerate(tiers):
        # Boilerplate (menus, footers: ingest/boilerplate.py) is never an answer.
        condition = "c.search_vector @@ %s::tsquery AND NOT c.boilerplate"
        branch_params: list[Any] = [tier]
        if n > 0:
            # Not already found by the tier before. The GIN index knows no workspaces: a
            # relaxed tier's bitmap holds every tenant's chunks with a common word, and the
            # planner may test this before the workspace (their costs tie), decompressing
            # the tsvector of every other tenant's row it passes (in bench/retrieval.py's
            # database ~6,000 for one query, half of its 50 ms). The CASE makes it last.
            condition += (
                " AND CASE WHEN c.workspace_id = %s AND NOT c.boilerplate"
                " THEN NOT c.search_vector @@ %s::tsquery ELSE false END"
            )
            branch_params += [workspace_id, tiers[n - 1]]
        source = scope_clause("c", scope, branch_params)
        branches.append(
            f"""(SELECT x.id, ts_rank_cd(x.search_vector, %s::tsquery) AS rank, {n} AS tier
                 FROM (SELECT c.id, c.search_vector FROM ingest_chunk c
                       WHERE c.workspace_id = %s AND {condition}{source}
                       LIMIT %s) AS x
                 ORDER BY rank DESC, x.id LIMIT %s)"""  # noqa: S608 (values are parameters)
        )
        params += [ranking, workspace_id, *branch_params, KEYWORD_SCAN_LIMIT, candidates]
    sql = f"SELECT id, rank, tier FROM ({' UNION ALL '.join(branches)}) AS t LIMIT %s"  # noqa: S608
    params.append(candidates)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    top = len(tiers) - 1
    return [(int(pk), round(float(rank) + (top - tier), 6)) for pk, rank, tier in rows]
