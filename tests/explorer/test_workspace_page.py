"""The workspace page (explorer/workspace_views.py) and GET/PATCH /workspaces/{slug}/llm-budget:
the monthly LLM budget and its use this month, shown to members, set by admins; raising it
resumes extraction paused at it. And the known-only and topic options of the upload and
crawl forms."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django_tasks_db.models import DBTaskResult

from ingest.actions.sources import do_create_text_source
from ingest.models import Document, DocumentStatus, Source
from knowledge.actions.extraction.monthly_budget import PAUSED_PREFIX, do_pause_extraction
from knowledge.actions.llm_calls import do_record_llm_call
from knowledge.models import ExtractionStatus, SourceExtraction
from tests.explorer.sources_data import MARKDOWN, media_root  # noqa: F401
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def priced(settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "priced-model"
    settings.LLM_PRICE_INPUT_PER_MTOK = 1_000_000.0  # a dollar a prompt token
    settings.LLM_PRICE_OUTPUT_PER_MTOK = 0.0


def spend(member, dollars: int) -> None:
    do_record_llm_call(
        workspace_id=member.workspace.pk, purpose="extract", model="m", prompt_tokens=dollars
    )


def paused_source(member) -> Source:
    """A source whose document waits, embedded, for the budget (as extraction leaves it)."""
    source, added = do_create_text_source(
        workspace=member.workspace, title="survey", text="Station 1 lies near Ridge 1."
    )
    Document.objects.filter(pk=added.document.pk).update(status=DocumentStatus.EMBEDDED)
    Source.objects.filter(pk=source.pk).update(status="running")
    do_pause_extraction(source=source, message=f"{PAUSED_PREFIX} (20.00 USD) is spent.")
    return source


def test_members_see_the_budget_and_this_months_use(alice, make_member, priced):
    viewer = make_member("vera", workspace="acme", role=Role.VIEWER)
    spend(alice, 7)
    page = signed_in(viewer).get("/workspace/?ws=acme").content.decode()
    assert 'id="budget-amount">20.00 USD a month' in page
    assert "the server's default" in page
    assert 'id="budget-spent">7.0000 USD' in page
    assert 'id="budget-left">13.0000 USD' in page
    assert 'id="budget-input"' not in page  # only admins may change it
    assert signed_in(viewer).post("/workspace/llm-budget/?ws=acme", {}).status_code == 403
    assert 'id="nav-workspace"' in page


def test_an_admin_raises_the_budget_and_paused_extraction_resumes(
    alice, priced, django_capture_on_commit_callbacks
):
    spend(alice, 25)
    source = paused_source(alice)
    page = signed_in(alice).get("/workspace/?ws=acme").content.decode()
    assert 'id="budget-spent-out"' in page
    assert f'href="/sources/{source.pk}/?ws=acme">survey</a>' in page

    browser = signed_in(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = browser.post("/workspace/llm-budget/?ws=acme", {"monthly_budget_usd": "50"})
    assert response.status_code == 302
    alice.workspace.refresh_from_db()
    assert alice.workspace.llm_monthly_budget_usd == Decimal("50.00")
    source.refresh_from_db()
    assert source.warning == ""
    assert SourceExtraction.objects.get(source=source).status == ExtractionStatus.RUNNING
    assert DBTaskResult.objects.filter(args_kwargs__kwargs__source_id=source.pk).exists()
    page = browser.get("/workspace/?ws=acme").content.decode()
    assert "Monthly LLM budget saved: 50.00 USD a month." in page
    assert "set for this workspace" in page


def test_a_budget_still_spent_resumes_nothing(alice, priced, django_capture_on_commit_callbacks):
    spend(alice, 25)
    source = paused_source(alice)
    with django_capture_on_commit_callbacks(execute=True):
        signed_in(alice).post("/workspace/llm-budget/?ws=acme", {"monthly_budget_usd": "21"})
    source.refresh_from_db()
    assert source.warning.startswith(PAUSED_PREFIX)
    assert not DBTaskResult.objects.exists()


def test_a_bad_amount_is_said_next_to_the_field(alice, priced):
    response = signed_in(alice).post("/workspace/llm-budget/?ws=acme", {"monthly_budget_usd": "-3"})
    assert response.status_code == 422
    page = response.content.decode()
    assert 'id="budget-error"' in page and "expected an amount from 0" in page
    assert 'value="-3"' in page
    alice.workspace.refresh_from_db()
    assert alice.workspace.llm_monthly_budget_usd is None


def test_the_api_reads_the_budget_and_only_admins_set_it(
    alice, make_member, priced, django_capture_on_commit_callbacks
):
    editor = make_member("ed", workspace="acme", role=Role.EDITOR)
    spend(alice, 25)
    source = paused_source(alice)
    read = editor.client().get("/api/v1/workspaces/acme/llm-budget").json()
    assert read["monthly_budget_usd"] == 20.0
    assert read["override_usd"] is None
    assert read["spent_this_month_usd"] == 25.0
    assert read["spent_out"] is True
    assert read["paused_sources"] == [{"id": source.pk, "name": "survey"}]

    path = "/api/v1/workspaces/acme/llm-budget"
    refused = editor.client().patch(path, {"monthly_budget_usd": 100}, "application/json")
    assert refused.status_code == 403
    invalid = alice.client().patch(path, {"monthly_budget_usd": -1}, "application/json")
    assert invalid.status_code == 422
    with django_capture_on_commit_callbacks(execute=True):
        raised = alice.client().patch(path, {"monthly_budget_usd": 0}, "application/json")
    assert raised.status_code == 200
    body = raised.json()
    assert body["monthly_budget_usd"] is None  # 0: no limit
    assert body["override_usd"] == 0.0
    assert body["spent_out"] is False
    assert body["paused_sources"] == []
    back = alice.client().patch(path, {"monthly_budget_usd": None}, "application/json").json()
    assert back["monthly_budget_usd"] == 20.0 and back["override_usd"] is None


def test_the_upload_form_takes_known_only(alice, django_capture_on_commit_callbacks):
    upload = SimpleUploadedFile("notes.md", MARKDOWN, content_type="text/markdown")
    with django_capture_on_commit_callbacks(execute=False):
        signed_in(alice).post("/sources/upload/?ws=acme", {"files": [upload], "known_only": "on"})
    assert Source.objects.get().settings == {"known_only": True}
    page = signed_in(alice).get("/?ws=acme").content.decode()
    assert 'id="upload-known-only"' in page
    assert "Only add evidence for entities already known" in page


def test_the_crawl_form_takes_a_topic_and_known_only(alice, django_capture_on_commit_callbacks):
    form = {
        "mode": "recursive",
        "url": "https://docs.example.org/",
        "topic": "Sailing boats",
        "known_only": "on",
    }
    with django_capture_on_commit_callbacks(execute=False):
        response = signed_in(alice).post("/sources/crawl/?ws=acme", form)
    assert response.status_code == 302
    source = Source.objects.get()
    assert (source.settings["topic"], source.settings["known_only"]) == ("Sailing boats", True)
    detail = signed_in(alice).get(f"/sources/{source.pk}/?ws=acme").content.decode()
    assert '<q id="source-topic">Sailing boats</q>' in detail
    assert 'id="counter-off-topic"' in detail
    assert "data-off-topic" not in detail


def test_the_source_page_counts_and_marks_off_topic_documents(alice):
    source, added = do_create_text_source(
        workspace=alice.workspace, title="bread", text="Knead the dough for ten minutes."
    )
    Source.objects.filter(pk=source.pk).update(
        settings={"topic": "Sailing boats"}, counters={"documents": 1, "off_topic": 1}
    )
    Document.objects.filter(pk=added.document.pk).update(off_topic=True, topic_similarity=0.031)
    detail = signed_in(alice).get(f"/sources/{source.pk}/?ws=acme").content.decode()
    assert "<dt>Off topic</dt><dd>1</dd>" in detail
    assert f'data-off-topic="{added.document.pk}">off topic (similarity 0.03)' in detail
