"""`manage.py entity delete ID --workspace SLUG` and `entity undo EVENT_ID`: through the
curation actions (delete, and the History page's undo); exit 0 done, 1 not found (another
workspace's entity or event too) or refused, 2 usage (tests/ingest/test_source_command.py
runs the command line's own usage errors)."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import CurationRule, Entity, Relation
from tests.knowledge.graph_data import make_graph

pytestmark = pytest.mark.django_db


def entity_command(*args: str) -> str:
    out = StringIO()
    call_command("entity", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def refused(*args: str) -> CommandError:
    with pytest.raises(CommandError) as caught:
        entity_command(*args)
    return caught.value


def test_delete_hides_the_entity_and_prints_the_undo_that_brings_it_back(alice):
    built = make_graph(
        alice.workspace,
        entities={"Ada Lovelace": "person", "Analytical Engine": "product"},
        relations=[("Ada Lovelace", "Analytical Engine", "created_by")],
    )
    ada = built.entities["Ada Lovelace"]
    out = entity_command("delete", str(ada.pk), "--workspace", "acme")
    found = re.fullmatch(
        r"Deleted 'Ada Lovelace' \(event (\d+); undo: manage.py entity undo (\d+) "
        r"--workspace acme\)\n",
        out,
    )
    assert found and found[1] == found[2], out
    assert Entity.objects.get(pk=ada.pk).state == "deleted"
    assert Relation.objects.get(pk=built.relations[0].pk).state == "deleted"
    assert CurationRule.objects.filter(entity=ada, kind="blocked", active=True).exists()
    # Deleting it again is refused: it is deleted already.
    again = refused("delete", str(ada.pk), "--workspace", "acme")
    assert again.returncode == 1 and str(again) == "'Ada Lovelace' is deleted."

    # The printed undo, run as printed.
    undone = entity_command("undo", found[1], "--workspace", "acme")
    assert undone.startswith("Restored 'Ada Lovelace' (event ")
    assert Entity.objects.get(pk=ada.pk).state == "active"
    assert Relation.objects.get(pk=built.relations[0].pk).state == "active"
    assert not CurationRule.objects.filter(entity=ada, kind="blocked", active=True).exists()
    twice = refused("undo", found[1], "--workspace", "acme")
    assert twice.returncode == 1 and "undone" in str(twice)


def test_a_missing_or_another_workspaces_entity_or_event_is_not_found(alice, bob):
    theirs = make_graph(bob.workspace, entities={"Globex secret": "concept"})
    secret = theirs.entities["Globex secret"]
    for entity_id in (str(secret.pk), "999999999"):
        missing = refused("delete", entity_id, "--workspace", "acme")
        assert missing.returncode == 1
        assert str(missing) == f"No entity {entity_id} in this workspace."
    assert Entity.objects.get(pk=secret.pk).state == "active"
    out = StringIO()
    call_command("entity", "delete", str(secret.pk), "--workspace", "globex", stdout=out)
    event_id = re.search(r"event (\d+)", out.getvalue())[1]  # type: ignore[index]
    foreign = refused("undo", event_id, "--workspace", "acme")
    assert foreign.returncode == 1
    assert str(foreign) == f"No curation event {event_id} in this workspace."
    assert Entity.objects.get(pk=secret.pk).state == "deleted"  # bob's deletion stands
    unknown = refused("delete", str(secret.pk), "--workspace", "nope")
    assert unknown.returncode == 2
