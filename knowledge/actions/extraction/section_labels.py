"""A person's word on a source's section labels (knowledge/selectors/section_labels.py):
a label the counts learnt is a subject after all ("not structure": extraction may make an
entity of it), or a label the counts missed is structure. Stored per source
(`SectionLabelOverride`) and read when the source is extracted, so it takes effect on
re-extraction (`manage.py extract --force`, or the source's re-extract action): a label
made structure also gives back, on any extraction of the source, the evidence its chunks
held for it (knowledge/actions/extraction/materialize.py).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from ingest.models import Source
from knowledge.models import SectionLabelOverride
from knowledge.selectors.section_labels import MAX_LABEL_CHARS, label_key
from workspaces.errors import InvalidInput
from workspaces.models import Workspace


def do_set_section_label(
    *,
    workspace: Workspace,
    source: Source,
    label: str,
    structure: bool | None,
    actor: Any = None,
) -> SectionLabelOverride | None:
    """Say whether `label` is structure in the source (True), not structure (False), or
    leave it to the counts again (None: the override is removed). `source` must be the
    workspace's (callers look it up with `get_source_for_workspace`). Returns the override,
    or None once removed."""
    if source.workspace_id != workspace.pk:
        raise InvalidInput("That source is not in this workspace.")
    text = " ".join(str(label).split())
    key = label_key(text)
    if not key:
        raise InvalidInput("Give a label.")
    if len(text) > MAX_LABEL_CHARS:
        raise InvalidInput(f"A section label has at most {MAX_LABEL_CHARS} characters.")
    with transaction.atomic():
        rows = SectionLabelOverride.objects.for_workspace(workspace).filter(source=source)
        if structure is None:
            rows.filter(label=key).delete()
            return None
        override, _ = rows.update_or_create(
            workspace=workspace,
            source=source,
            label=key,
            defaults={
                "text": text,
                "structure": structure,
                "created_by": actor if getattr(actor, "is_authenticated", False) else None,
            },
        )
        return override
