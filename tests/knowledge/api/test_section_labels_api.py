"""A source's learnt section labels through the API: read by any member, corrected by
editors (`GET`/`PUT /workspaces/{slug}/sources/{id}/section-labels`, knowledge/api/quality.py).
Tenancy of the route is checked with every other route's in tests/api/test_isolation.py."""

from __future__ import annotations

import json

import pytest

from knowledge.models import SectionLabelOverride
from tests.knowledge.section_label_data import AMPERSAND, CLASSES, HOSTILE, MANUAL, make_source
from workspaces.models import Role

pytestmark = pytest.mark.django_db


def url(member, source) -> str:
    return f"/api/v1/workspaces/{member.workspace.slug}/sources/{source.pk}/section-labels"


def put(member, source, body):
    return member.client().put(
        url(member, source), json.dumps(body), content_type="application/json"
    )


def test_a_member_reads_the_labels_a_source_learnt(alice, make_member):
    manual = make_source(alice.workspace, "manual", MANUAL)
    viewer = make_member("vera", workspace=alice.workspace.slug, role=Role.VIEWER)

    answer = viewer.client().get(url(viewer, manual))
    assert answer.status_code == 200
    body = answer.json()
    assert body["source"] == {"id": manual.pk, "name": "manual"}
    assert body["min_documents"] == 3
    assert [(label["text"], label["documents"], label["structure"]) for label in body["labels"]] == [
        ("DESCRIPTION", 3, True), ("NAME", 3, True), ("SYNOPSIS", 3, True),
    ]  # fmt: skip


def test_an_editor_overrides_a_label_both_ways_and_a_viewer_cannot(alice, make_member):
    manual = make_source(alice.workspace, "manual", MANUAL)
    viewer = make_member("vera", workspace=alice.workspace.slug, role=Role.VIEWER)

    assert put(viewer, manual, {"label": "NAME", "structure": False}).status_code == 403
    assert not SectionLabelOverride.objects.exists()

    off = put(alice, manual, {"label": "name", "structure": False}).json()["labels"]
    assert {label["key"]: (label["override"], label["structure"]) for label in off}["name"] == (
        False, False,
    )  # fmt: skip
    added = put(alice, manual, {"label": "Quillwheel", "structure": True}).json()["labels"]
    assert added[-1] == {
        "key": "quillwheel", "text": "Quillwheel", "documents": 0, "learnt": False,
        "override": True, "structure": True,
    }  # fmt: skip
    back = put(alice, manual, {"label": "NAME", "structure": None}).json()["labels"]
    assert {label["key"]: label["override"] for label in back}["name"] is None


def test_a_hostile_label_comes_back_as_data(alice):
    classes = make_source(alice.workspace, "classes", CLASSES)
    labels = put(alice, classes, {"label": HOSTILE, "structure": True}).json()["labels"]
    assert {HOSTILE, AMPERSAND} <= {label["text"] for label in labels}


def test_an_empty_label_is_refused(alice):
    manual = make_source(alice.workspace, "manual", MANUAL)
    answer = put(alice, manual, {"label": " ", "structure": True})
    assert answer.status_code in {400, 422}
    assert not SectionLabelOverride.objects.exists()
