"""Names with an underscore keep their last word's plural in their key.

The canonical key dropped a trailing "s" from the last word of every name, so the Python
manual's `get_config_var` and `get_config_vars` (two functions), or `data_file` and
`data_files`, shared one key and became one entity. In an identifier the "s" is part of the
name (knowledge/consolidation/names.py, `canonical_key`); this recomputes the key and the
blocking keys of the entities whose name has an underscore. Where another active entity of
the type already holds the new key, the entity keeps its old one, as migration 0003 did.
Entities merged under the old rule stay merged: a person can unmerge them.
"""

from django.db import migrations


def rekey_identifiers(apps, schema_editor):
    from knowledge.consolidation import names

    Entity = apps.get_model("knowledge", "Entity")
    rows = Entity.objects.filter(name__contains="_").select_related("type").order_by("pk")
    taken = set(
        Entity.objects.filter(state="active").values_list(
            "workspace_id", "type_id", "canonical_name"
        )
    )
    for entity in rows.iterator(chunk_size=2000):
        suffixes = names.suffixes_for_type(entity.type.name)
        key = names.canonical_key(entity.name, suffixes=suffixes)[:300]
        if not key or key == entity.canonical_name:
            continue
        slot = (entity.workspace_id, entity.type_id, key)
        if entity.state == "active" and slot in taken:
            continue
        taken.discard((entity.workspace_id, entity.type_id, entity.canonical_name))
        taken.add(slot)
        entity.canonical_name = key
        entity.blocking_keys = [k[:80] for k in names.blocking_keys(entity.name, suffixes=suffixes)]
        entity.save(update_fields=["canonical_name", "blocking_keys"])


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0022_neighborhood_as_arrays")]

    operations = [migrations.RunPython(rekey_identifiers, migrations.RunPython.noop)]
