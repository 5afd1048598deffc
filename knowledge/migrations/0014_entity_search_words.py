"""Entity search by any word of a name or alias, with one typo: the words of every entity's
name and aliases (knowledge_entityword) and the one-typo keys of those words
(knowledge_wordtypokey, SymSpell's deletion neighbourhood), kept by PostgreSQL itself.

`knowledge_name_words(name)` is the one definition of a word, used by the triggers and by
the search (knowledge/selectors/entities.py) alike: NFKC, lower case, ø æ œ ł đ ð þ ß ı
spelled out, apostrophes deleted, accents stripped (NFKD without combining marks), split
at anything not a letter or digit, words of 2+ characters (at most 100). Words of 4 to 32
characters get typo keys: the word itself and each single-character deletion of it.

Triggers: inserting or deleting entities, renaming one, and any change to aliases rewrite
the words of exactly the entities touched (statement-level with transition tables where a
statement can touch many rows, so a bulk insert of entities is one set-based insert), and
add the typo keys of words the workspace did not have yet. Existing rows are backfilled.
"""

from django.db import migrations, models

FUNCTIONS = r"""
CREATE FUNCTION knowledge_name_words(name text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(DISTINCT left(w, 100)), '{}')
    FROM regexp_split_to_table(
        regexp_replace(
            normalize(
                replace(replace(replace(replace(
                    translate(
                        lower(normalize(coalesce(name, ''), NFKC)),
                        'øłđðı''’‘ʼ`´', 'olddi'
                    ),
                    'æ', 'ae'), 'œ', 'oe'), 'þ', 'th'), 'ß', 'ss'),
                NFKD
            ),
            '[\u0300-\u036f]', '', 'g'
        ),
        '[^[:alnum:]]+'
    ) AS w
    WHERE length(w) >= 2
$$;

CREATE FUNCTION knowledge_typo_keys(word text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN length(word) BETWEEN 4 AND 32 THEN array(
        SELECT DISTINCT k FROM (
            SELECT word AS k
          UNION ALL
            SELECT overlay(word PLACING '' FROM i FOR 1) FROM generate_series(1, length(word)) AS i
        ) AS keys
    ) ELSE '{}'::text[] END
$$;

CREATE FUNCTION knowledge_refresh_entity_words(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF ids IS NULL OR cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    DELETE FROM knowledge_entityword WHERE entity_id = ANY(ids);
    INSERT INTO knowledge_entityword (workspace_id, entity_id, word)
    SELECT DISTINCT n.workspace_id, n.id, w
    FROM (
        SELECT workspace_id, id, name FROM knowledge_entity WHERE id = ANY(ids)
      UNION ALL
        SELECT workspace_id, entity_id, name FROM knowledge_alias WHERE entity_id = ANY(ids)
    ) AS n
    CROSS JOIN LATERAL unnest(knowledge_name_words(n.name)) AS w
    ORDER BY 1, 2, 3
    ON CONFLICT DO NOTHING;
    -- Typo keys of the words the workspace meets for the first time (their own key says
    -- whether it has them), in one order so concurrent writers never deadlock.
    INSERT INTO knowledge_wordtypokey (workspace_id, key, word)
    SELECT DISTINCT w.workspace_id, k, w.word
    FROM knowledge_entityword AS w
    CROSS JOIN LATERAL unnest(knowledge_typo_keys(w.word)) AS k
    WHERE w.entity_id = ANY(ids)
      AND length(w.word) BETWEEN 4 AND 32
      AND NOT EXISTS (
          SELECT 1 FROM knowledge_wordtypokey AS t
          WHERE t.workspace_id = w.workspace_id AND t.key = w.word AND t.word = w.word
      )
    ORDER BY 1, 2, 3
    ON CONFLICT DO NOTHING;
END;
$$;

CREATE FUNCTION knowledge_entity_words() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM knowledge_refresh_entity_words(array(SELECT id FROM new_rows));
    ELSIF TG_OP = 'DELETE' THEN
        DELETE FROM knowledge_entityword WHERE entity_id IN (SELECT id FROM old_rows);
    ELSE
        PERFORM knowledge_refresh_entity_words(ARRAY[NEW.id]);
    END IF;
    RETURN NULL;
END;
$$;

CREATE FUNCTION knowledge_alias_words() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT entity_id) INTO ids FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT entity_id) INTO ids FROM old_rows;
    ELSE
        SELECT array_agg(DISTINCT changed.id) INTO ids FROM (
            SELECT o.entity_id AS id, n.entity_id AS other
            FROM old_rows AS o JOIN new_rows AS n ON n.id = o.id
            WHERE o.entity_id <> n.entity_id OR o.name IS DISTINCT FROM n.name
        ) AS moved, LATERAL (VALUES (moved.id), (moved.other)) AS changed(id);
    END IF;
    PERFORM knowledge_refresh_entity_words(ids);
    RETURN NULL;
END;
$$;

CREATE TRIGGER entity_words_insert AFTER INSERT ON knowledge_entity
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_entity_words();
CREATE TRIGGER entity_words_rename AFTER UPDATE OF name ON knowledge_entity
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
    EXECUTE FUNCTION knowledge_entity_words();
CREATE TRIGGER entity_words_delete AFTER DELETE ON knowledge_entity
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_entity_words();
CREATE TRIGGER alias_words_insert AFTER INSERT ON knowledge_alias
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_alias_words();
CREATE TRIGGER alias_words_update AFTER UPDATE ON knowledge_alias
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_alias_words();
CREATE TRIGGER alias_words_delete AFTER DELETE ON knowledge_alias
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_alias_words();
"""

BACKFILL = """
INSERT INTO knowledge_entityword (workspace_id, entity_id, word)
SELECT DISTINCT n.workspace_id, n.id, w
FROM (
    SELECT workspace_id, id, name FROM knowledge_entity
  UNION ALL
    SELECT workspace_id, entity_id, name FROM knowledge_alias
) AS n
CROSS JOIN LATERAL unnest(knowledge_name_words(n.name)) AS w
ON CONFLICT DO NOTHING;
INSERT INTO knowledge_wordtypokey (workspace_id, key, word)
SELECT v.workspace_id, k, v.word
FROM (
    SELECT DISTINCT workspace_id, word FROM knowledge_entityword
    WHERE length(word) BETWEEN 4 AND 32
) AS v
CROSS JOIN LATERAL unnest(knowledge_typo_keys(v.word)) AS k
ON CONFLICT DO NOTHING;
"""

DROP = """
DROP TRIGGER alias_words_delete ON knowledge_alias;
DROP TRIGGER alias_words_update ON knowledge_alias;
DROP TRIGGER alias_words_insert ON knowledge_alias;
DROP TRIGGER entity_words_delete ON knowledge_entity;
DROP TRIGGER entity_words_rename ON knowledge_entity;
DROP TRIGGER entity_words_insert ON knowledge_entity;
DROP FUNCTION knowledge_alias_words();
DROP FUNCTION knowledge_entity_words();
DROP FUNCTION knowledge_refresh_entity_words(bigint[]);
DROP FUNCTION knowledge_typo_keys(text);
DROP FUNCTION knowledge_name_words(text);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0013_stored_degree"),
        ("workspaces", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="EntityWord",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("entity_id", models.BigIntegerField()),
                ("word", models.CharField(max_length=100)),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=models.deletion.CASCADE,
                        related_name="+",
                        to="workspaces.workspace",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["workspace", "word"],
                        include=("entity_id",),
                        name="entityword_ws_word",
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("entity_id", "word"), name="entityword_unique")
                ],
            },
        ),
        migrations.CreateModel(
            name="WordTypoKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=100)),
                ("word", models.CharField(max_length=100)),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=models.deletion.CASCADE,
                        related_name="+",
                        to="workspaces.workspace",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("workspace", "key", "word"), name="wordtypokey_unique"
                    )
                ],
            },
        ),
        migrations.RunSQL(sql=FUNCTIONS + BACKFILL, reverse_sql=DROP),
    ]
