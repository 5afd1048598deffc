"""Graph traversal in the server (knowledge/graph/postgres.py): a neighbourhood and a
shortest path are each one call of a plpgsql function instead of a statement per level (a
path) or two statements planned on every call (a neighbourhood). At 100k entities and 1M
relations most of a query's time was spent around the work rather than in it: a round trip,
parsing and planning per statement, arrays sent back and forth between levels, and a probe of
the entity table (index, then heap) for every candidate of a level. Here the statements'
plans are cached by plpgsql, the levels stay in the server, and the walk reads candidates'
ids and degrees from a covering index, `entity_active_walk`, in one ordered pass per level
(a `= ANY(array)` index scan) instead of a probe each; the same index gives the kept nodes'
fields without the table. Its columns are ones whose changes already update the entity's
other indexes (degree, mentions, community), or rarely change (name, type).

Both functions return exactly the answers the backend gave before (the conformance suite,
and bench/graph.py against networkx). Arrays that are parameters inside a function are not
hashed by `= ANY(...)` filters, so set membership against large arrays (the other side's
frontier, the ids already seen, the nodes whose edges are wanted) is written as EXISTS over
`unnest`, which the planner answers with a hash join. Neither function starts parallel
workers: each statement touches a few thousand index entries, and the planner sometimes chose
workers for one, which took longer than the whole query.

The index is created here rather than in the model's Meta: it serves only these functions.
"""

from django.db import migrations

INDEX = """
CREATE INDEX entity_active_walk ON knowledge_entity (id)
INCLUDE (workspace_id, degree, type_id, mention_count, community, name)
WHERE state = 'active';
"""

NEIGHBORHOOD = """
CREATE FUNCTION knowledge_neighborhood(
    p_ws bigint, p_seeds bigint[], p_hops integer, p_limit integer, p_out boolean,
    p_in boolean, p_relation_types text[], p_entity_types text[], p_max_edges integer
) RETURNS TABLE (
    node_id bigint, node_name text, node_type text, node_degree integer, node_depth integer,
    node_mentions integer, node_community integer, edge_id bigint, edge_source bigint,
    edge_target bigint, edge_type text, edge_weight double precision, truncated boolean
)
LANGUAGE plpgsql STABLE
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    -- The filters as ids (NULL: any type).
    rel_types bigint[];
    ent_types bigint[];
    -- The walk: the level being built, every entity reached so far, the nodes left to
    -- return, whether returnable entities were left out; the answer's ids in order, their depths.
    depth integer := 0;
    frontier bigint[];
    seen bigint[];
    budget integer;
    more boolean;
    level bigint[];
    kept bigint[];
    depths integer[];
    -- The workspace's type names by id, looked up per row (cheaper than a join per row).
    etype_ids bigint[];
    etype_names text[];
    rtype_ids bigint[];
    rtype_names text[];
BEGIN
    IF p_relation_types IS NOT NULL THEN
        rel_types := ARRAY(
            SELECT rt.id FROM knowledge_relationtype AS rt
            WHERE rt.workspace_id = p_ws AND rt.name = ANY(p_relation_types));
    END IF;
    IF p_entity_types IS NOT NULL THEN
        ent_types := ARRAY(
            SELECT et.id FROM knowledge_entitytype AS et
            WHERE et.workspace_id = p_ws AND et.name = ANY(p_entity_types));
    END IF;
    -- Depth 0: the seeds that are active entities of the workspace, the best `p_limit`.
    SELECT coalesce((array_agg(e.id ORDER BY e.degree DESC, e.id))[1:p_limit], '{}'),
           coalesce(array_agg(e.id), '{}'),
           count(*) > p_limit
    INTO level, frontier, more
    FROM knowledge_entity AS e
    WHERE e.id = ANY(p_seeds) AND e.workspace_id = p_ws AND e.state = 'active';
    kept := level;
    depths := array_fill(0, ARRAY[cardinality(level)]);
    seen := frontier;
    budget := p_limit - cardinality(level);
    WHILE depth < p_hops AND cardinality(frontier) > 0 AND NOT more LOOP
        depth := depth + 1;
        -- The next level: every active entity of the workspace one hop from the frontier and
        -- not seen before (the next frontier), of which the returnable ones (entity types)
        -- are ranked by degree, then id, and the best `budget` kept, all read from
        -- entity_active_walk alone (as are the kept nodes' fields at the end). With the
        -- budget spent, a level only says whether anything returnable lies beyond: without
        -- a type filter the first entity answers (the ELSE branch); with one, levels of
        -- other types are walked through.
        IF budget > 0 OR ent_types IS NOT NULL THEN
            SELECT coalesce((array_agg(n.id ORDER BY n.degree DESC, n.id)
                                 FILTER (WHERE n.match))[1:budget], '{}'),
                   coalesce(array_agg(n.id), '{}'),
                   count(*) FILTER (WHERE n.match) > greatest(budget, 0)
            INTO level, frontier, more
            FROM (
                SELECT e.id, e.degree,
                       (ent_types IS NULL OR e.type_id = ANY(ent_types)) AS match
                FROM knowledge_entity AS e
                WHERE e.id = ANY(ARRAY(
                        SELECT r.target_id FROM unnest(frontier) AS f(id)
                        JOIN knowledge_relation AS r ON r.source_id = f.id
                        WHERE p_out AND r.state = 'active'
                          AND (rel_types IS NULL OR r.type_id = ANY(rel_types))
                      UNION ALL
                        SELECT r.source_id FROM unnest(frontier) AS f(id)
                        JOIN knowledge_relation AS r ON r.target_id = f.id
                        WHERE p_in AND r.state = 'active'
                          AND (rel_types IS NULL OR r.type_id = ANY(rel_types))
                      EXCEPT
                        SELECT unnest(seen)))
                  AND e.workspace_id = p_ws AND e.state = 'active'
            ) AS n;
            kept := kept || level;
            depths := depths || array_fill(depth, ARRAY[cardinality(level)]);
            budget := budget - cardinality(level);
            seen := seen || frontier;
        ELSE
            more := EXISTS (
                SELECT 1 FROM knowledge_entity AS e
                WHERE e.id = ANY(ARRAY(
                        SELECT r.target_id FROM unnest(frontier) AS f(id)
                        JOIN knowledge_relation AS r ON r.source_id = f.id
                        WHERE p_out AND r.state = 'active'
                          AND (rel_types IS NULL OR r.type_id = ANY(rel_types))
                      UNION ALL
                        SELECT r.source_id FROM unnest(frontier) AS f(id)
                        JOIN knowledge_relation AS r ON r.target_id = f.id
                        WHERE p_in AND r.state = 'active'
                          AND (rel_types IS NULL OR r.type_id = ANY(rel_types))
                      EXCEPT
                        SELECT unnest(seen)))
                  AND e.workspace_id = p_ws AND e.state = 'active');
            frontier := '{}';
        END IF;
    END LOOP;
    -- The nodes in the contract's order (depth, then degree, then id: the order kept), then
    -- the active edges among them, by id, at most `p_max_edges`. Both sides of an edge are
    -- matched through a hash of the ids (a `= ANY(array)` filter would compare each edge
    -- with every id: the array is a parameter here, and those are not hashed).
    SELECT array_agg(et.id), array_agg(et.name::text) INTO etype_ids, etype_names
    FROM knowledge_entitytype AS et WHERE et.workspace_id = p_ws;
    SELECT array_agg(rt.id), array_agg(rt.name::text) INTO rtype_ids, rtype_names
    FROM knowledge_relationtype AS rt WHERE rt.workspace_id = p_ws;
    RETURN QUERY
    SELECT e.id, e.name::text, etype_names[array_position(etype_ids, e.type_id)], e.degree,
           k.depth, e.mention_count, e.community, NULL::bigint, NULL::bigint, NULL::bigint,
           NULL::text, NULL::double precision, more
    FROM unnest(kept, depths) WITH ORDINALITY AS k(id, depth, pos)
    JOIN knowledge_entity AS e ON e.id = k.id
    WHERE e.state = 'active'
    ORDER BY k.pos;
    RETURN QUERY
    SELECT NULL::bigint, NULL::text, NULL::text, NULL::integer, NULL::integer, NULL::integer,
           NULL::integer, r.id, r.source_id, r.target_id,
           rtype_names[array_position(rtype_ids, r.type_id)], r.weight, more
    FROM unnest(kept) AS t(id)
    JOIN knowledge_relation AS r ON r.target_id = t.id
    WHERE r.state = 'active' AND r.workspace_id = p_ws
      AND (rel_types IS NULL OR r.type_id = ANY(rel_types))
      AND EXISTS (SELECT 1 FROM unnest(kept) AS s(id) WHERE s.id = r.source_id)
    ORDER BY r.id
    LIMIT p_max_edges;
END;
$$;
"""

SHORTEST_PATH = """
CREATE FUNCTION knowledge_shortest_path(
    p_ws bigint, p_source bigint, p_target bigint, p_max_hops integer, p_type_names text[]
) RETURNS TABLE (
    node_id bigint, node_name text, node_type text, node_degree integer,
    node_mentions integer, node_community integer, edge_id bigint, edge_source bigint,
    edge_target bigint, edge_type text, edge_weight double precision
)
LANGUAGE plpgsql STABLE
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    -- Per side (1: from the source, 2: from the target): its frontier, the level before it,
    -- hops walked, and every node it reached with the neighbour it was reached from.
    frontier1 bigint[] := ARRAY[p_source];
    frontier2 bigint[] := ARRAY[p_target];
    previous1 bigint[] := '{}';
    previous2 bigint[] := '{}';
    walked1 integer := 0;
    walked2 integer := 0;
    nodes1 bigint[] := ARRAY[p_source];
    nodes2 bigint[] := ARRAY[p_target];
    parents1 bigint[] := ARRAY[NULL::bigint];
    parents2 bigint[] := ARRAY[NULL::bigint];
    grow integer;
    frontier bigint[];
    other bigint[];
    exclude bigint[];
    ids bigint[];
    parents bigint[];
    met boolean;
    meeting bigint;
    path1 bigint[];
    path2 bigint[];
    step bigint;
    path bigint[];
    type_ids bigint[];
BEGIN
    IF p_type_names IS NOT NULL THEN
        type_ids := ARRAY(
            SELECT rt.id FROM knowledge_relationtype AS rt
            WHERE rt.workspace_id = p_ws AND rt.name = ANY(p_type_names));
    END IF;
    IF (SELECT count(*) FROM knowledge_entity AS e
        WHERE e.id IN (p_source, p_target) AND e.workspace_id = p_ws AND e.state = 'active')
       < (CASE WHEN p_source = p_target THEN 1 ELSE 2 END) THEN
        RETURN;
    END IF;
    IF p_source = p_target THEN
        meeting := p_source;
    END IF;
    WHILE meeting IS NULL AND walked1 + walked2 < p_max_hops LOOP
        IF (cardinality(frontier1), walked1) <= (cardinality(frontier2), walked2) THEN
            grow := 1; frontier := frontier1; other := frontier2; exclude := previous1 || frontier1;
        ELSE
            grow := 2; frontier := frontier2; other := frontier1; exclude := previous2 || frontier2;
        END IF;
        -- A level is checked (active, of the workspace) only when it is expanded: most of a
        -- level reached through a hub is never expanded, the other side meets it first.
        frontier := ARRAY(
            SELECT e.id FROM knowledge_entity AS e
            WHERE e.id = ANY(frontier) AND e.workspace_id = p_ws AND e.state = 'active');
        IF cardinality(frontier) = 0 THEN
            RETURN;
        END IF;
        WITH hop AS MATERIALIZED (
            SELECT r.target_id AS id, r.source_id AS parent FROM unnest(frontier) AS f(id)
            JOIN knowledge_relation AS r ON r.source_id = f.id
            WHERE r.state = 'active' AND (type_ids IS NULL OR r.type_id = ANY(type_ids))
          UNION ALL
            SELECT r.source_id, r.target_id FROM unnest(frontier) AS f(id)
            JOIN knowledge_relation AS r ON r.target_id = f.id
            WHERE r.state = 'active' AND (type_ids IS NULL OR r.type_id = ANY(type_ids))
        ),
        reached AS MATERIALIZED (
            SELECT m.id, m.parent FROM (
                SELECT h.id, min(h.parent) AS parent FROM hop AS h
                WHERE EXISTS (SELECT 1 FROM unnest(other) AS o(id) WHERE o.id = h.id)
                GROUP BY h.id
            ) AS m
            WHERE EXISTS (
                SELECT 1 FROM knowledge_entity AS e
                WHERE e.id = m.id AND e.workspace_id = p_ws AND e.state = 'active')
        ),
        found AS (
            SELECT m.id, m.parent, true AS meets FROM reached AS m
          UNION ALL
            SELECT h.id, min(h.parent), false
            FROM hop AS h
            WHERE NOT EXISTS (SELECT 1 FROM reached)
              AND NOT EXISTS (SELECT 1 FROM unnest(exclude) AS x(id) WHERE x.id = h.id)
            GROUP BY h.id
        )
        -- Ordered by id only when the sides met (the smallest meeting node is the answer):
        -- a level is a set, and each node's parent is the smallest anyway.
        SELECT coalesce(array_agg(x.id ORDER BY x.id) FILTER (WHERE x.meets),
                        array_agg(x.id), '{}'),
               coalesce(array_agg(x.parent ORDER BY x.id) FILTER (WHERE x.meets),
                        array_agg(x.parent), '{}'),
               coalesce(bool_or(x.meets), false)
        INTO ids, parents, met
        FROM found AS x;
        IF grow = 1 THEN
            nodes1 := nodes1 || ids; parents1 := parents1 || parents;
            previous1 := frontier1; walked1 := walked1 + 1;
            IF NOT met THEN frontier1 := ids; END IF;
        ELSE
            nodes2 := nodes2 || ids; parents2 := parents2 || parents;
            previous2 := frontier2; walked2 := walked2 + 1;
            IF NOT met THEN frontier2 := ids; END IF;
        END IF;
        IF met THEN
            meeting := ids[1];
        END IF;
    END LOOP;
    IF meeting IS NULL THEN
        RETURN;
    END IF;
    path1 := ARRAY[meeting];
    step := parents1[array_position(nodes1, meeting)];
    WHILE step IS NOT NULL LOOP
        path1 := step || path1;
        step := parents1[array_position(nodes1, step)];
    END LOOP;
    path2 := '{}';
    step := parents2[array_position(nodes2, meeting)];
    WHILE step IS NOT NULL LOOP
        path2 := path2 || step;
        step := parents2[array_position(nodes2, step)];
    END LOOP;
    path := path1 || path2;
    -- The path's rows, and for each hop the edge used: the smallest-id active relation
    -- between the two nodes, either direction. It is looked up among the edges of the
    -- lower-degree end (the `+ 0` keeps the planner from scanning the other end's edges,
    -- which on a hub are thousands; the covering indexes answer without the table).
    RETURN QUERY
    WITH steps AS MATERIALIZED (
        SELECT p.hop, e.id, e.name::text AS name, et.name::text AS type, e.degree,
               e.mention_count, e.community
        FROM unnest(path) WITH ORDINALITY AS p(id, hop)
        JOIN knowledge_entity AS e ON e.id = p.id
        JOIN knowledge_entitytype AS et ON et.id = e.type_id
    )
    SELECT s.id, s.name, s.type, s.degree, s.mention_count, s.community,
           edge.id, edge.source_id, edge.target_id, rt.name::text, edge.weight
    FROM steps AS s
    LEFT JOIN steps AS prev ON prev.hop = s.hop - 1
    LEFT JOIN LATERAL (
        SELECT ends.* FROM (
            SELECT r.id, r.source_id, r.target_id, r.type_id, r.weight
            FROM knowledge_relation AS r
            WHERE r.state = 'active' AND r.workspace_id = p_ws
              AND r.source_id = CASE WHEN prev.degree <= s.degree THEN prev.id ELSE s.id END
              AND r.target_id + 0 = CASE WHEN prev.degree <= s.degree THEN s.id ELSE prev.id END
              AND (type_ids IS NULL OR r.type_id = ANY(type_ids))
          UNION ALL
            SELECT r.id, r.source_id, r.target_id, r.type_id, r.weight
            FROM knowledge_relation AS r
            WHERE r.state = 'active' AND r.workspace_id = p_ws
              AND r.target_id = CASE WHEN prev.degree <= s.degree THEN prev.id ELSE s.id END
              AND r.source_id + 0 = CASE WHEN prev.degree <= s.degree THEN s.id ELSE prev.id END
              AND (type_ids IS NULL OR r.type_id = ANY(type_ids))
            OFFSET 0
        ) AS ends
        ORDER BY ends.id
        LIMIT 1
    ) AS edge ON prev.id IS NOT NULL
    LEFT JOIN knowledge_relationtype AS rt ON rt.id = edge.type_id
    ORDER BY s.hop;
END;
$$;
"""

DROP = """
DROP FUNCTION knowledge_shortest_path(bigint, bigint, bigint, integer, text[]);
DROP FUNCTION knowledge_neighborhood(
    bigint, bigint[], integer, integer, boolean, boolean, text[], text[], integer);
DROP INDEX entity_active_walk;
"""


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0018_community_map")]

    operations = [
        migrations.RunSQL(sql=INDEX + NEIGHBORHOOD + SHORTEST_PATH, reverse_sql=DROP),
    ]
