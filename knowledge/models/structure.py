"""What a person said about a source's learnt structure: a section label the source's
statistics call structure that is a subject after all, or a label they call structure that
the statistics did not (knowledge/selectors/section_labels.py learns the labels).

One row per (source, label); no row means the learnt answer stands. Read when the source's
documents are extracted (knowledge/actions/extraction/materialize.py), so a change takes
effect on re-extraction.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from workspaces.models import WorkspaceScopedModel


class SectionLabelOverride(WorkspaceScopedModel):
    source = models.ForeignKey("ingest.Source", on_delete=models.CASCADE, related_name="+")
    # The label's key (knowledge/selectors/section_labels.label_key): what headings and
    # extracted names are compared on.
    label = models.CharField(max_length=200)
    # The label as the person gave it or the page showed it, for display.
    text = models.CharField(max_length=200)
    # True: structure (never an entity of this source); False: not structure (may be one).
    structure = models.BooleanField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "label"], name="sectionlabel_unique_label")
        ]
        ordering = ["source", "label"]

    def __str__(self) -> str:
        return f"{self.text} ({'structure' if self.structure else 'not structure'})"
