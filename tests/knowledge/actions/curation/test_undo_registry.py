"""Every curation action that can be undone has an inverse in the registry
(knowledge/actions/curation/events.py), registered by the module that owns the action and
complete once the package is imported: a new action, or a module that forgot to register
one, fails here rather than as "has no undo" on someone's History page.

The undoable actions are those today's undo takes: every action but the undos themselves
(unmerge, restore, relation undo), which are not undone — the decision is made again.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from knowledge.actions.curation.events import INVERSES, UNDO_ACTIONS, register_inverse
from knowledge.models import CurationAction

UNDOABLE = frozenset(
    {
        CurationAction.MERGE,
        CurationAction.AUTO_MERGE,
        CurationAction.RENAME,
        CurationAction.RETYPE,
        CurationAction.DELETE,
        CurationAction.SPLIT,
        CurationAction.ALIAS_ADD,
        CurationAction.ALIAS_REMOVE,
        CurationAction.BLOCK,
        CurationAction.NOT_SAME,
        CurationAction.RELATION_DELETE,
        CurationAction.RELATION_RETYPE,
        CurationAction.RELATION_REVERSE,
        CurationAction.RELATION_ADD,
        CurationAction.RELATION_EDIT,
    }
)


def test_every_undoable_action_has_an_inverse():
    assert sorted(UNDOABLE - INVERSES.keys()) == []


def test_every_action_is_either_undoable_or_an_undo():
    assert sorted(set(CurationAction) - UNDOABLE - UNDO_ACTIONS) == []
    assert sorted(UNDOABLE & UNDO_ACTIONS) == []


def test_undo_events_have_no_inverse():
    assert sorted(UNDO_ACTIONS & INVERSES.keys()) == []


def test_an_action_has_one_inverse():
    owner = INVERSES[CurationAction.RENAME]
    with pytest.raises(ImproperlyConfigured, match="rename already has an inverse"):
        register_inverse(CurationAction.RENAME)(lambda undoing: undoing.event)
    assert INVERSES[CurationAction.RENAME] is owner
