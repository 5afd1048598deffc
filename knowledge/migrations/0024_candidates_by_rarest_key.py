"""A name's spelling candidates are those found through its rarest blocking keys, not the
lowest ids (knowledge/selectors/matching.py `_candidates`).

Each key still yields at most `p_per_key` entities, a GIN bitmap scan with no order: a
common key's rows are any few of them, in the heap's order, which differs between two runs
of the same crawl. The function then kept the `p_per_name` lowest ids of their union. On
the Python manual, `stat.S_ENFMT` shares four rare keys with `S_ENFMT` ("enfmt", its prefix,
suffix and initials) and one each with 80 other names through "stat"; `S_ENFMT` came 50th by
id, so whether the two merged depended on which rows the common keys had returned: two runs
of `bench/doc_quality.py speed --max-pages 60` on the same code built two graphs, four such
pairs apart. Now a candidate ranks by the fewest rows any key it was found through gave
(a key that gave fewer than `p_per_key` gave all it has, the same in every run), then by the
number of keys it shares, then by id. Counting shared keys alone put `collections.abc`'s
other members (six common keys each) before `ByteString` (three, one of them its own name)
for `collections.abc.ByteString`. Replacing the function keeps migration 0021's plan
setting.
"""

from importlib import import_module

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION knowledge_blocking_candidates(
    p_ws bigint, p_positions integer[], p_type_ids bigint[], p_keys text[], p_exclude bigint,
    p_per_key integer, p_per_name integer
) RETURNS TABLE (
    "position" integer, id bigint, name varchar, canonical_name varchar, type_id bigint,
    mention_count integer, blocking_keys varchar[]
)
LANGUAGE sql STABLE
SET enable_indexscan = off
SET enable_seqscan = off
SET plan_cache_mode = force_custom_plan
AS $$
    SELECT ranked.position, ranked.id, ranked.name, ranked.canonical_name, ranked.type_id,
           ranked.mention_count, ranked.blocking_keys
    FROM (
        SELECT d.*,
               row_number() OVER (
                   PARTITION BY d.position ORDER BY d.rarest, d.shared DESC, d.id
               ) AS rank
        FROM (
            -- Grouped by the entity alone: its other columns are one value each.
            SELECT k.position, e.id, any_value(e.name) AS name,
                   any_value(e.canonical_name) AS canonical_name,
                   any_value(e.type_id) AS type_id, any_value(e.mention_count) AS mention_count,
                   any_value(e.blocking_keys) AS blocking_keys, count(*) AS shared,
                   min(e.found) AS rarest
            FROM unnest(p_positions, p_type_ids, p_keys) AS k(position, type_id, key)
            CROSS JOIN LATERAL (
                -- How many rows the key gave (counted after the LIMIT: never more than
                -- p_per_key rows are read).
                SELECT y.*, count(*) OVER () AS found
                FROM (
                    SELECT x.id, x.name, x.canonical_name, x.type_id, x.mention_count,
                           x.blocking_keys
                    FROM knowledge_entity AS x
                    WHERE knowledge_scoped_keys(x.type_id, x.blocking_keys) @> ARRAY[k.key]
                      AND x.state = 'active' AND x.id <> p_exclude
                      -- Implied by the type (types are per workspace), and checked on the
                      -- rows found (+ 0): intersecting with the workspace's or type's
                      -- whole b-tree index cost ten times the lookup itself.
                      AND x.workspace_id + 0 = p_ws AND x.type_id + 0 = k.type_id
                    LIMIT p_per_key
                ) AS y
            ) AS e
            GROUP BY k.position, e.id
        ) AS d
    ) AS ranked
    WHERE ranked.rank <= p_per_name
    ORDER BY ranked.position, ranked.id;
$$;
"""

# Going back: migration 0020's function, with migration 0021's plan setting.
LOWEST_IDS = [
    import_module("knowledge.migrations.0020_blocking_candidates_function").FUNCTION.replace(
        "CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1
    ),
    "ALTER FUNCTION knowledge_blocking_candidates(bigint, integer[], bigint[], text[], bigint, "
    "integer, integer) SET plan_cache_mode = force_custom_plan;",
]


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0023_identifiers_keep_plurals")]

    operations = [migrations.RunSQL(sql=FUNCTION, reverse_sql=LOWEST_IDS)]
