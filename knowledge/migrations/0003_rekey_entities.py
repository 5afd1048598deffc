"""Recompute entities' canonical keys and blocking keys with the consolidation name rules
(knowledge/consolidation/names.py). Where two entities of one type now share a key, the
later one keeps its old key: `manage.py consolidate` merges such twins (reversibly)."""

from django.db import migrations


def rekey(apps, schema_editor):
    from knowledge.consolidation import names

    Entity = apps.get_model("knowledge", "Entity")
    taken = set(
        Entity.objects.filter(state="active").values_list(
            "workspace_id", "type_id", "canonical_name"
        )
    )
    for entity in Entity.objects.select_related("type").order_by("pk").iterator(chunk_size=2000):
        suffixes = names.suffixes_for_type(entity.type.name)
        key = names.canonical_key(entity.name, suffixes=suffixes)[:300]
        entity.blocking_keys = [k[:80] for k in names.blocking_keys(entity.name, suffixes=suffixes)]
        fields = ["blocking_keys"]
        slot = (entity.workspace_id, entity.type_id, key)
        if key and key != entity.canonical_name and (entity.state != "active" or slot not in taken):
            taken.discard((entity.workspace_id, entity.type_id, entity.canonical_name))
            taken.add(slot)
            entity.canonical_name = key
            fields.append("canonical_name")
        entity.save(update_fields=fields)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0002_curation")]

    operations = [migrations.RunPython(rekey, migrations.RunPython.noop)]
