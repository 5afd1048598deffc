"""Curation: the changes people (and consolidation) make to the graph, each one
transaction and one `CurationEvent` carrying what is needed to undo it exactly, and the
`CurationRule`s it implies, which consolidation consults before anything automatic.

One module per subject, each importing only those below it (pyproject.toml's contract
"Curation: …"):

    undo.py         one undo for every event: the inverse the registry names, refused
                    while a later decision still stands (or cascaded)
    suggestions.py  the review queue: accept (a merge) or reject (not the same)
    merge.py        merge and unmerge entities
    block.py        block a name, mark a pair not the same, and their undo
    types.py        merge two types of the schema registry (each row retyped here)
    entities.py     rename, retype, delete, restore, split, aliases; the entity locks
    relations.py    delete, retype, reverse, describe or add a relation by hand
    rules.py        the rules decisions leave: a pinned name, a pair kept apart
    events.py       the log: the one writer of events, the lock, the snapshots, and the
                    registry of inverses each module fills for the actions it owns

This `__init__` imports every module, so the registry is complete before `undo`
dispatches; it also re-exports the public actions.
"""

from knowledge.actions.curation.block import do_block_name, do_mark_not_same, do_undo_block
from knowledge.actions.curation.entities import (
    do_add_alias,
    do_delete_entity,
    do_remove_alias,
    do_rename_entity,
    do_restore_entity,
    do_retype_entity,
    do_set_aliases,
    do_split_entity,
    do_update_entity,
)
from knowledge.actions.curation.merge import default_survivor, do_merge_entities, do_unmerge
from knowledge.actions.curation.relations import (
    do_add_relation,
    do_delete_relation,
    do_edit_relation,
    do_retype_relation,
    do_reverse_relation,
    do_undo_relation_event,
    do_update_relation,
)
from knowledge.actions.curation.suggestions import do_accept_suggestion, do_reject_suggestion
from knowledge.actions.curation.types import (
    do_merge_types,
    do_undo_schema_change,
    do_unmerge_types,
)
from knowledge.actions.curation.undo import do_undo_event

__all__ = [
    "default_survivor",
    "do_accept_suggestion",
    "do_add_alias",
    "do_add_relation",
    "do_block_name",
    "do_delete_entity",
    "do_delete_relation",
    "do_edit_relation",
    "do_mark_not_same",
    "do_merge_entities",
    "do_merge_types",
    "do_reject_suggestion",
    "do_remove_alias",
    "do_rename_entity",
    "do_restore_entity",
    "do_retype_entity",
    "do_retype_relation",
    "do_reverse_relation",
    "do_set_aliases",
    "do_split_entity",
    "do_undo_block",
    "do_undo_event",
    "do_undo_relation_event",
    "do_undo_schema_change",
    "do_unmerge",
    "do_unmerge_types",
    "do_update_entity",
    "do_update_relation",
]
