"""Entity.degree, kept by PostgreSQL: statement-level triggers on knowledge_relation add
each statement's net change per entity (transition tables, so a bulk insert of a million
relations is one aggregate and one UPDATE, not a million), locking the entity rows in id
order so concurrent writers cannot deadlock on them; a row trigger on knowledge_entity
ignores any other write of the column (a stale instance's save(), an insert with a value),
so the stored degree is always the count of active relations touching the entity, a
self-loop once."""

from django.db import migrations, models

FUNCTIONS = """
CREATE FUNCTION knowledge_add_degree(ids bigint[], changes bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    PERFORM set_config('graphloom.degree_write', 'on', true);
    PERFORM 1 FROM knowledge_entity WHERE id = ANY(ids) ORDER BY id FOR NO KEY UPDATE;
    UPDATE knowledge_entity AS e SET degree = e.degree + d.change
    FROM unnest(ids, changes) AS d(id, change)
    WHERE e.id = d.id;
    PERFORM set_config('graphloom.degree_write', 'off', true);
END;
$$;

CREATE FUNCTION knowledge_relation_degree() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
    changes bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(c.id ORDER BY c.id), array_agg(c.n ORDER BY c.id) INTO ids, changes
        FROM (
            SELECT t.id, sum(t.n) AS n FROM (
                SELECT source_id AS id, 1 AS n FROM new_rows WHERE state = 'active'
              UNION ALL
                SELECT target_id, 1 FROM new_rows
                WHERE state = 'active' AND target_id <> source_id
            ) AS t GROUP BY t.id
        ) AS c;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(c.id ORDER BY c.id), array_agg(c.n ORDER BY c.id) INTO ids, changes
        FROM (
            SELECT t.id, sum(t.n) AS n FROM (
                SELECT source_id AS id, -1 AS n FROM old_rows WHERE state = 'active'
              UNION ALL
                SELECT target_id, -1 FROM old_rows
                WHERE state = 'active' AND target_id <> source_id
            ) AS t GROUP BY t.id
        ) AS c;
    ELSE
        SELECT array_agg(c.id ORDER BY c.id), array_agg(c.n ORDER BY c.id) INTO ids, changes
        FROM (
            SELECT t.id, sum(t.n) AS n FROM (
                SELECT source_id AS id, 1 AS n FROM new_rows WHERE state = 'active'
              UNION ALL
                SELECT target_id, 1 FROM new_rows
                WHERE state = 'active' AND target_id <> source_id
              UNION ALL
                SELECT source_id, -1 FROM old_rows WHERE state = 'active'
              UNION ALL
                SELECT target_id, -1 FROM old_rows
                WHERE state = 'active' AND target_id <> source_id
            ) AS t GROUP BY t.id HAVING sum(t.n) <> 0
        ) AS c;
    END IF;
    PERFORM knowledge_add_degree(coalesce(ids, '{}'), coalesce(changes, '{}'));
    RETURN NULL;
END;
$$;

CREATE FUNCTION knowledge_entity_degree_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('graphloom.degree_write', true), '') <> 'on' THEN
        IF TG_OP = 'INSERT' THEN
            NEW.degree := 0;
        ELSE
            NEW.degree := OLD.degree;
        END IF;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER relation_degree_insert AFTER INSERT ON knowledge_relation
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_relation_degree();
CREATE TRIGGER relation_degree_update AFTER UPDATE ON knowledge_relation
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_relation_degree();
CREATE TRIGGER relation_degree_delete AFTER DELETE ON knowledge_relation
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_relation_degree();
CREATE TRIGGER entity_degree_guard_insert BEFORE INSERT ON knowledge_entity
    FOR EACH ROW WHEN (NEW.degree <> 0)
    EXECUTE FUNCTION knowledge_entity_degree_guard();
CREATE TRIGGER entity_degree_guard_update BEFORE UPDATE ON knowledge_entity
    FOR EACH ROW WHEN (NEW.degree IS DISTINCT FROM OLD.degree)
    EXECUTE FUNCTION knowledge_entity_degree_guard();
"""

BACKFILL = """
SELECT set_config('graphloom.degree_write', 'on', true);
UPDATE knowledge_entity AS e SET degree = d.degree
FROM (
    SELECT t.id, count(*) AS degree FROM (
        SELECT source_id AS id FROM knowledge_relation WHERE state = 'active'
      UNION ALL
        SELECT target_id FROM knowledge_relation
        WHERE state = 'active' AND target_id <> source_id
    ) AS t GROUP BY t.id
) AS d
WHERE e.id = d.id;
SELECT set_config('graphloom.degree_write', 'off', true);
"""

DROP = """
DROP TRIGGER entity_degree_guard_update ON knowledge_entity;
DROP TRIGGER entity_degree_guard_insert ON knowledge_entity;
DROP TRIGGER relation_degree_delete ON knowledge_relation;
DROP TRIGGER relation_degree_update ON knowledge_relation;
DROP TRIGGER relation_degree_insert ON knowledge_relation;
DROP FUNCTION knowledge_entity_degree_guard();
DROP FUNCTION knowledge_relation_degree();
DROP FUNCTION knowledge_add_degree(bigint[], bigint[]);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0012_retrieval_write_path"),
        ("workspaces", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="entity",
            name="degree",
            field=models.PositiveIntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.RunSQL(sql=FUNCTIONS + BACKFILL, reverse_sql=DROP),
        migrations.AddIndex(
            model_name="entity",
            index=models.Index(
                models.F("workspace"),
                models.OrderBy(models.F("degree"), descending=True),
                models.OrderBy(models.F("mention_count"), descending=True),
                models.F("id"),
                condition=models.Q(("state", "active")),
                name="entity_ws_degree",
            ),
        ),
        migrations.AddIndex(
            model_name="entity",
            index=models.Index(
                models.F("type"),
                models.OrderBy(models.F("degree"), descending=True),
                models.OrderBy(models.F("mention_count"), descending=True),
                models.F("id"),
                condition=models.Q(("state", "active")),
                name="entity_type_degree",
            ),
        ),
    ]
