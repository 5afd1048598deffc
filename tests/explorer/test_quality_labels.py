"""The quality page shows, per source, the section labels it learnt (with how many documents
carry each) and lets an editor correct them (explorer/quality_views.py,
knowledge/selectors/section_labels.py).

The sources are tests/knowledge/section_label_data.py's. That the corrections change what
extraction makes is tests/knowledge/extraction/test_section_labels.py.
"""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from ingest.models import Chunk, Source
from knowledge.actions.extraction.section_labels import do_set_section_label
from knowledge.models import SectionLabelOverride
from knowledge.selectors.section_labels import structure_label_keys
from tests.knowledge.section_label_data import (
    AMPERSAND,
    CLASSES,
    FUNCTIONS,
    HOSTILE,
    MANUAL,
    make_source,
)
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def page(client: Client, workspace, source: Source | None = None) -> str:
    query = {"ws": workspace.slug, **({"source": source.pk} if source else {})}
    response = client.get(reverse("explorer:quality"), query)
    assert response.status_code == 200
    return response.content.decode()


def label_rows(content: str) -> dict[str, tuple[str, str]]:
    """Label -> (documents, what it is), as the page's table shows them."""
    rows = re.findall(
        r'<tr class="section-label[^"]*" data-label="[^"]*">\s*<th scope="row" class="name">'
        r"(.*?)</th>\s*<td class=\"number\">(.*?)</td>\s*<td>(.*?)</td>",
        content,
        re.S,
    )
    return {
        html.unescape(name): (count, re.sub(r"<[^>]+>", "", what).strip())
        for name, count, what in rows
    }


def post_label(client: Client, workspace, source: Source, label: str, structure: str, **headers):
    return client.post(
        f"{reverse('explorer:quality_label')}?ws={workspace.slug}",
        {"source": source.pk, "label": label, "structure": structure},
        headers=headers,
    )


def test_each_sources_page_lists_the_labels_it_learnt_with_their_documents(alice):
    manual = make_source(alice.workspace, "manual", MANUAL)
    classes = make_source(alice.workspace, "classes", CLASSES)
    functions = make_source(alice.workspace, "functions", FUNCTIONS)
    client = signed_in(alice)

    assert label_rows(page(client, alice.workspace, manual)) == {
        "NAME": ("3", "structure"), "SYNOPSIS": ("3", "structure"),
        "DESCRIPTION": ("3", "structure"),
    }  # fmt: skip
    rows = label_rows(page(client, alice.workspace, classes))
    assert rows["Method Summary"] == ("3", "structure")
    assert rows["Constructor Detail"] == ("3", "structure")
    assert set(label_rows(page(client, alice.workspace, functions))) == {"Parameters", "Notes"}
    # The workspace's page links to each source's.
    whole = page(client, alice.workspace)
    assert all(f"source={s.pk}#labels-heading" in whole for s in (manual, classes, functions))


def test_the_page_escapes_a_hostile_label(alice):
    classes = make_source(alice.workspace, "classes", CLASSES)
    do_set_section_label(workspace=alice.workspace, source=classes, label=HOSTILE, structure=True)
    content = page(signed_in(alice), alice.workspace, classes)

    assert HOSTILE not in content
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in content
    assert AMPERSAND not in content
    assert "Usage &amp; &quot;Notes&quot;" in content
    rows = label_rows(content)
    assert rows[AMPERSAND] == ("3", "structure")
    assert rows[HOSTILE] == ("—", "structure (added)")
    # Member headings are names of code, never labels.
    assert not {"equals", "hashCode"} & set(rows)


def test_an_editor_marks_a_label_not_structure_and_back(alice):
    manual = make_source(alice.workspace, "manual", MANUAL)
    client = signed_in(alice)

    answer = post_label(client, alice.workspace, manual, "DESCRIPTION", "not_structure", **HTMX)
    assert answer.status_code == 200
    assert label_rows(answer.content.decode())["DESCRIPTION"] == ("3", "not structure (marked)")
    assert "description" not in structure_label_keys(alice.workspace, manual)

    post_label(client, alice.workspace, manual, "DESCRIPTION", "learnt", **HTMX)
    assert "description" in structure_label_keys(alice.workspace, manual)
    assert not SectionLabelOverride.objects.exists()


def test_an_editor_adds_a_label_as_structure_without_javascript(alice):
    manual = make_source(alice.workspace, "manual", MANUAL)
    client = signed_in(alice)

    answer = post_label(client, alice.workspace, manual, "Quillwheel", "structure")
    assert answer.status_code == 302
    rows = label_rows(page(client, alice.workspace, manual))
    assert rows["Quillwheel"] == ("—", "structure (added)")
    assert "quillwheel" in structure_label_keys(alice.workspace, manual)


def test_a_viewer_sees_the_labels_but_cannot_override_them(alice, make_member):
    manual = make_source(alice.workspace, "manual", MANUAL)
    viewer = make_member("vera", workspace=alice.workspace.slug, role=Role.VIEWER)
    client = signed_in(viewer)

    content = page(client, alice.workspace, manual)
    assert "DESCRIPTION" in label_rows(content)
    assert "Not structure" not in content
    answer = post_label(client, alice.workspace, manual, "DESCRIPTION", "not_structure")
    assert answer.status_code == 403
    assert not SectionLabelOverride.objects.exists()
    assert (
        client.post(
            f"{reverse('explorer:quality_reextract')}?ws={alice.workspace.slug}",
            {"source": manual.pk},
        ).status_code
        == 403
    )


def test_another_workspaces_source_cannot_be_overridden(alice, bob):
    theirs = make_source(bob.workspace, "theirs", MANUAL)
    answer = post_label(signed_in(alice), alice.workspace, theirs, "NAME", "not_structure")

    assert answer.status_code == 404
    assert not SectionLabelOverride.objects.exists()


def test_an_empty_or_unknown_decision_is_refused_in_the_section(alice):
    manual = make_source(alice.workspace, "manual", MANUAL)
    client = signed_in(alice)

    empty = post_label(client, alice.workspace, manual, "  ", "structure", **HTMX)
    assert "Give a label." in empty.content.decode()
    odd = post_label(client, alice.workspace, manual, "NAME", "maybe", **HTMX)
    assert "Say whether the label is structure." in odd.content.decode()
    assert not SectionLabelOverride.objects.exists()


def test_the_admin_lists_and_saves_overrides_through_the_action(alice):
    manual = make_source(alice.workspace, "manual", MANUAL)
    root = User.objects.create_superuser("root", "root@example.org", "not-used-here-1")
    client = Client()
    client.force_login(root)

    added = client.post(
        "/admin/knowledge/sectionlabeloverride/add/",
        {"source": manual.pk, "text": "  See   Also ", "structure": "on"},
    )
    assert added.status_code == 302
    row = SectionLabelOverride.objects.get()
    assert (row.label, row.text, row.structure, row.workspace_id) == (
        "see also", "See Also", True, alice.workspace.pk,
    )  # fmt: skip
    listing = client.get("/admin/knowledge/sectionlabeloverride/")
    assert listing.status_code == 200 and b"See Also" in listing.content


def test_a_sources_page_shows_its_boilerplate_once_per_text_escaped(alice):
    manual = make_source(alice.workspace, "manual", MANUAL)
    footer = 'Home | Next | <img src=x onerror="alert(1)"> | Search'
    for document in manual.documents.all():
        Chunk.objects.create(
            workspace=alice.workspace, document=document, ordinal=0, text=footer, char_start=0,
            char_end=len(footer), token_count=9, content_hash="footer", boilerplate=True,
        )  # fmt: skip
    content = page(signed_in(alice), alice.workspace, manual)

    assert footer not in content
    assert content.count(html.escape(footer, quote=True)) == 1
    row = re.search(
        r'<td class="boilerplate-text">(.*?)</td><td class="number">(\d+)</td>', content
    )
    assert row is not None and row.group(2) == "3"
