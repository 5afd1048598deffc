"""A neighbourhood's answer as one row of arrays (knowledge/graph/postgres.py).

Migration 0019's `knowledge_neighborhood` returned a row per node and per edge, a thousand
rows of thirteen columns for a 2-hop neighbourhood of 500 nodes, half of them NULL: the
server wrote each row to a tuplestore and to the wire, and the driver parsed and built a
tuple for each. One row of twelve arrays and the `truncated` flag carries the same answer
in the same order (nodes by depth, degree, id; edges by id), and the backend builds its
objects column-wise. The edges among the kept nodes are now read in one ordered `= ANY`
pass over `relation_active_in` instead of a probe per kept node. The walk is unchanged.

Measured at 100k entities / 1M relations (docs/BENCHMARKS.md, "Graph backends"): see there.
The return type changes, so the function is dropped and created again.
"""

from importlib import import_module

from django.db import migrations

# The rows version, put back by the reverse.
ROWS = import_module("knowledge.migrations.0019_graph_traversal_functions").NEIGHBORHOOD

DROP = """
DROP FUNCTION knowledge_neighborhood(
    bigint, bigint[], integer, integer, boolean, boolean, text[], text[], integer);
"""

NEIGHBORHOOD = """
CREATE FUNCTION knowledge_neighborhood(
    p_ws bigint, p_seeds bigint[], p_hops integer, p_limit integer, p_out boolean,
    p_in boolean, p_relation_types text[], p_entity_types text[], p_max_edges integer
) RETURNS TABLE (
    node_ids bigint[], node_names text[], node_types text[], node_degrees integer[],
    node_depths integer[], node_mentions integer[], node_communities integer[],
    edge_ids bigint[], edge_sources bigint[], edge_targets bigint[], edge_types text[],
    edge_weights double precision[], truncated boolean
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
    -- The answer as one row of arrays, the nodes in the contract's order (depth, then
    -- degree, then id: the order kept), then the active edges among them by id, at most
    -- `p_max_edges`: the edges are the in-edges of the kept nodes (one ordered `= ANY` pass
    -- over relation_active_in) whose source is kept too, matched through a hash of the ids
    -- (a `= ANY(array)` filter would compare each edge with every id: the array is a
    -- parameter here, and those are not hashed).
    SELECT array_agg(et.id), array_agg(et.name::text) INTO etype_ids, etype_names
    FROM knowledge_entitytype AS et WHERE et.workspace_id = p_ws;
    SELECT array_agg(rt.id), array_agg(rt.name::text) INTO rtype_ids, rtype_names
    FROM knowledge_relationtype AS rt WHERE rt.workspace_id = p_ws;
    SELECT array_agg(e.id ORDER BY k.pos), array_agg(e.name::text ORDER BY k.pos),
           array_agg(etype_names[array_position(etype_ids, e.type_id)] ORDER BY k.pos),
           array_agg(e.degree ORDER BY k.pos), array_agg(k.depth ORDER BY k.pos),
           array_agg(e.mention_count ORDER BY k.pos), array_agg(e.community ORDER BY k.pos)
    INTO node_ids, node_names, node_types, node_degrees, node_depths, node_mentions,
         node_communities
    FROM unnest(kept, depths) WITH ORDINALITY AS k(id, depth, pos)
    JOIN knowledge_entity AS e ON e.id = k.id
    WHERE e.state = 'active';
    SELECT array_agg(r.id ORDER BY r.id), array_agg(r.source_id ORDER BY r.id),
           array_agg(r.target_id ORDER BY r.id),
           array_agg(rtype_names[array_position(rtype_ids, r.type_id)] ORDER BY r.id),
           array_agg(r.weight ORDER BY r.id)
    INTO edge_ids, edge_sources, edge_targets, edge_types, edge_weights
    FROM (
        SELECT r.id, r.source_id, r.target_id, r.type_id, r.weight
        FROM knowledge_relation AS r
        WHERE r.target_id = ANY(kept) AND r.state = 'active' AND r.workspace_id = p_ws
          AND (rel_types IS NULL OR r.type_id = ANY(rel_types))
          AND EXISTS (SELECT 1 FROM unnest(kept) AS s(id) WHERE s.id = r.source_id)
        ORDER BY r.id
        LIMIT p_max_edges
    ) AS r;
    truncated := more;
    RETURN NEXT;
END;
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0021_blocking_keys_without_pending_list")]

    operations = [
        migrations.RunSQL(sql=DROP + NEIGHBORHOOD, reverse_sql=DROP + ROWS),
    ]
