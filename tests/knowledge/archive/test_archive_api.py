"""The archive over HTTP: a workspace admin exports (the zip, streamed), staff signed in
import it as a new workspace; everyone else is refused."""

from __future__ import annotations

import io
import zipfile

from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge.models import Entity, RelationRule
from tests.knowledge.archive.conftest import content
from tests.support import signed_in
from workspaces.models import Membership, Role, Workspace


def exported(client, slug: str = "acme") -> bytes:
    response = client.post(f"/api/v1/workspaces/{slug}/export")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/zip"
    assert f'filename="{slug}.graphloom.zip"' in response["Content-Disposition"]
    return b"".join(response.streaming_content)


def upload(data: bytes, slug: str = "copy") -> dict[str, object]:
    return {"archive": SimpleUploadedFile("acme.zip", data), "slug": slug}


def test_an_admin_exports_and_staff_imports(curated, alice):
    alice.user.is_staff = True
    alice.user.save()
    data = exported(alice.client())
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.getinfo("tables/knowledge.Entity.ndjson").compress_type == (
            zipfile.ZIP_DEFLATED
        )

    response = signed_in(alice).post("/api/v1/workspaces/import", upload(data))

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["slug"] == "copy"
    assert body["blobs"] == 1
    assert body["counts"]["knowledge.RelationRule"] == 1
    copy = Workspace.objects.get(slug="copy")
    assert content(copy) == content(curated.workspace)
    assert Membership.objects.get(workspace=copy).role == Role.ADMIN
    assert RelationRule.objects.get(workspace=copy).source.workspace_id == copy.pk


def test_the_graph_export_still_answers_get_on_the_same_path(curated, alice):
    response = alice.client().get("/api/v1/workspaces/acme/export?format=json")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")


def test_export_is_for_admins_only(curated, make_member):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    stranger = make_member("sam", workspace="elsewhere", role=Role.ADMIN)

    assert editor.client().post("/api/v1/workspaces/acme/export").status_code == 403
    assert stranger.client().post("/api/v1/workspaces/acme/export").status_code == 404


def test_import_is_for_staff_signed_in_only(curated, alice):
    data = exported(alice.client())

    not_staff = signed_in(alice).post("/api/v1/workspaces/import", upload(data))
    alice.user.is_staff = True
    alice.user.save()
    by_token = alice.client().post("/api/v1/workspaces/import", upload(data))

    assert not_staff.status_code == 403
    assert not_staff.json()["error"]["code"] == "forbidden"
    assert by_token.status_code == 403
    assert not Workspace.objects.filter(slug="copy").exists()


def test_a_broken_archive_or_a_taken_slug_is_refused(curated, alice):
    alice.user.is_staff = True
    alice.user.save()
    client = signed_in(alice)
    entities = Entity.objects.count()

    broken = client.post("/api/v1/workspaces/import", upload(b"not a zip"))
    taken = client.post("/api/v1/workspaces/import", upload(exported(client), slug="acme"))

    assert broken.status_code == 422
    assert "Invalid archive" in broken.json()["error"]["message"]
    assert taken.status_code == 409
    assert Entity.objects.count() == entities
