"""Consolidation's spelling candidates (knowledge/selectors/matching.py `_candidates`) as one
SQL function whose plan can only read the blocking-key GIN index.

The statement takes, for each blocking key of a window's new names, the first few active
entities of the name's type holding the key. Right for it is a GIN lookup per key. But a
workspace's first extraction runs while the entity table's statistics still describe a
nearly empty table, and the planner then walks the whole partial index of active names
(entity_unique_active_name) per key, testing every row's keys: measured on the Python
manual's first 12 pages, 22 ms for 124 keys where the GIN plan takes ~1 ms, and growing
with the workspace until autovacuum's next ANALYZE (15 % of an end-to-end crawl's time
over 60 pages, bench/doc_quality.py speed). Inside the function plain index scans and
sequential scans are priced out (the SET clauses hold for the call only), which leaves the
GIN bitmap scan: the same rows as before, whatever the statistics say.
"""

from django.db import migrations

FUNCTION = """
CREATE FUNCTION knowledge_blocking_candidates(
    p_ws bigint, p_positions integer[], p_type_ids bigint[], p_keys text[], p_exclude bigint,
    p_per_key integer, p_per_name integer
) RETURNS TABLE (
    "position" integer, id bigint, name varchar, canonical_name varchar, type_id bigint,
    mention_count integer, blocking_keys varchar[]
)
LANGUAGE sql STABLE
SET enable_indexscan = off
SET enable_seqscan = off
AS $$
    SELECT ranked.position, ranked.id, ranked.name, ranked.canonical_name, ranked.type_id,
           ranked.mention_count, ranked.blocking_keys
    FROM (
        SELECT d.*, row_number() OVER (PARTITION BY d.position ORDER BY d.id) AS rank
        FROM (
            SELECT DISTINCT ON (k.position, e.id) k.position, e.id, e.name,
                   e.canonical_name, e.type_id, e.mention_count, e.blocking_keys
            FROM unnest(p_positions, p_type_ids, p_keys) AS k(position, type_id, key)
            CROSS JOIN LATERAL (
                SELECT x.id, x.name, x.canonical_name, x.type_id, x.mention_count,
                       x.blocking_keys
                FROM knowledge_entity AS x
                WHERE knowledge_scoped_keys(x.type_id, x.blocking_keys) @> ARRAY[k.key]
                  AND x.state = 'active' AND x.id <> p_exclude
                  -- Implied by the type (types are per workspace), and checked on the rows
                  -- found (+ 0): intersecting with the workspace's or type's whole b-tree
                  -- index cost ten times the lookup itself.
                  AND x.workspace_id + 0 = p_ws AND x.type_id + 0 = k.type_id
                LIMIT p_per_key
            ) AS e
            ORDER BY k.position, e.id
        ) AS d
    ) AS ranked
    WHERE ranked.rank <= p_per_name
    ORDER BY ranked.position, ranked.id;
$$;
"""

DROP = """
DROP FUNCTION knowledge_blocking_candidates(
    bigint, integer[], bigint[], text[], bigint, integer, integer);
"""


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0019_graph_traversal_functions")]

    operations = [migrations.RunSQL(sql=FUNCTION, reverse_sql=DROP)]
