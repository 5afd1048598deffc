"""Crawl limits by role (issue 41): above CRAWL_ADMIN_ONLY_ABOVE_PAGES pages, or with the rate
limit off, only the workspace's admins may start a crawl; API tokens act with their user's
role. Through the real API with real tokens, the sources page and `manage.py crawl`."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from ingest.actions.crawl import do_create_crawl
from ingest.models import CrawlPage, Source, SourceStatus
from tests.support import signed_in
from workspaces.models import Role


@pytest.fixture
def members(make_member, alice):
    return {
        "viewer": make_member("vera", workspace="acme", role=Role.VIEWER),
        "editor": make_member("ed", workspace="acme", role=Role.EDITOR),
        "admin": alice,
    }


def ask_for_crawl(member, **fields):
    return member.client().post(
        "/api/v1/workspaces/acme/sources",
        {"kind": "crawl", "url": "https://docs.example.org/", **fields},
        content_type="application/json",
    )


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"max_pages": 5001}, "max_pages 5,001 is above 5,000 (CRAWL_ADMIN_ONLY_ABOVE_PAGES)"),
        ({"max_pages": 100, "rate": 0}, "rate 0 turns the rate limit off"),
    ],
)
def test_viewer_and_editor_tokens_are_refused_above_the_limit_and_an_admin_is_not(
    members, settings, fields, named, django_capture_on_commit_callbacks
):
    assert settings.CRAWL_ADMIN_ONLY_ABOVE_PAGES == 5000

    viewer = ask_for_crawl(members["viewer"], **fields)
    assert viewer.status_code == 403
    assert "editor role" in viewer.json()["error"]["message"]

    editor = ask_for_crawl(members["editor"], **fields)
    assert editor.status_code == 403
    error = editor.json()["error"]
    assert error["code"] == "forbidden"
    assert named in error["message"]
    assert "Only a workspace admin may start this crawl" in error["message"]
    assert "You are editor" in error["message"]
    assert not Source.objects.exists()  # nothing was created for the refused requests

    with django_capture_on_commit_callbacks(execute=False):
        admin = ask_for_crawl(members["admin"], **fields)
    assert admin.status_code == 201, admin.content
    assert admin.json()["status"] == SourceStatus.RUNNING
    assert Source.objects.count() == 1


def test_an_editor_may_crawl_up_to_the_limit_with_a_rate(
    members, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        response = ask_for_crawl(members["editor"], max_pages=5000, rate=1)
    assert response.status_code == 201, response.content


def test_the_limit_is_a_setting(members, settings, django_capture_on_commit_callbacks):
    settings.CRAWL_ADMIN_ONLY_ABOVE_PAGES = 10
    assert ask_for_crawl(members["editor"], max_pages=11).status_code == 403
    with django_capture_on_commit_callbacks(execute=False):
        assert ask_for_crawl(members["editor"], max_pages=10).status_code == 201


def test_an_editor_cannot_start_again_a_crawl_only_an_admin_may_run(
    members, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        source = do_create_crawl(
            workspace=members["admin"].workspace,
            url="https://docs.example.org/",
            mode="recursive",
            max_pages=20_000,
            role=Role.ADMIN,
            enqueue=False,
        )
    Source.objects.filter(pk=source.pk).update(status=SourceStatus.DONE)
    path = f"/api/v1/workspaces/acme/sources/{source.pk}/reingest"

    refused = members["editor"].client().post(path)
    assert refused.status_code == 403
    assert "20,000" in refused.json()["error"]["message"]
    source.refresh_from_db()
    assert source.status == SourceStatus.DONE
    with django_capture_on_commit_callbacks(execute=False):
        assert members["admin"].client().post(path).status_code == 200


def test_the_crawl_form_tells_an_editor_the_limit(members, django_capture_on_commit_callbacks):
    browser = signed_in(members["editor"])
    form = {"mode": "recursive", "url": "https://docs.example.org/", "max_pages": "6000"}
    response = browser.post("/sources/crawl/?ws=acme", form)
    assert response.status_code == 422
    assert "Only a workspace admin may start this crawl" in response.content.decode()
    assert not Source.objects.exists()

    admin = signed_in(members["admin"])
    with django_capture_on_commit_callbacks(execute=False):
        created = admin.post("/sources/crawl/?ws=acme", form)
    assert created.status_code == 302
    assert Source.objects.get().settings["max_pages"] == 6000


def test_the_command_line_is_the_operator_and_takes_a_topic(alice, capsys):
    call_command(
        "crawl",
        "https://docs.example.org/",
        "--workspace",
        "acme",
        "--max-pages",
        "50000",
        "--topic",
        "  Sailing boats\nand seamanship ",
        "--known-only",
    )
    printed = json.loads(capsys.readouterr().out)
    source = Source.objects.get(pk=printed["source"])
    assert source.settings["max_pages"] == 50000
    assert source.settings["topic"] == "Sailing boats and seamanship"
    assert source.settings["known_only"] is True
    assert CrawlPage.objects.filter(source=source).count() == 1
