"""`manage.py ingest` and `manage.py status`: exit codes, the final JSON line, progress."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ingest.models import Document, Source

pytestmark = pytest.mark.django_db


def ingest(*args: str) -> dict:
    out = StringIO()
    call_command("ingest", *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Alpha\n\nAlpha talks to Beta about graphs.\n")
    (root / "sub" / "b.txt").write_text("Beta answers with evidence.\n")
    (root / ".hidden").write_text("not ingested")
    return root


def test_ingest_wait_processes_a_directory_and_prints_one_json_line(alice, corpus):
    result = ingest(str(corpus), "--workspace", "acme", "--tags", "x,y", "--wait")
    assert result["status"] == "done"
    assert result["documents"] == 2
    assert result["failed"] == []
    assert result["chunks"] >= 2
    assert result["embedded"] == result["chunks"]
    source = Source.objects.get(pk=result["source"])
    assert source.tags == ["x", "y"]
    assert sorted(Document.objects.filter(source=source).values_list("path", flat=True)) == [
        "corpus/a.md",
        "corpus/sub/b.txt",
    ]


def test_ingest_exits_1_when_some_documents_fail_and_lists_them(alice, corpus):
    (corpus / "empty.txt").write_bytes(b"")
    out = StringIO()
    with pytest.raises(CommandError) as failed:
        call_command(
            "ingest", str(corpus), "--workspace", "acme", "--wait", stdout=out, stderr=StringIO()
        )
    assert failed.value.returncode == 1
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert [f["path"] for f in result["failed"]] == ["corpus/empty.txt"]
    assert "empty" in result["failed"][0]["error"].lower()


def test_ingest_usage_errors_exit_2(alice, tmp_path):
    with pytest.raises(CommandError) as missing_path:
        call_command("ingest", str(tmp_path / "nope"), "--workspace", "acme", stderr=StringIO())
    assert missing_path.value.returncode == 2
    with pytest.raises(CommandError) as missing_workspace:
        call_command("ingest", str(tmp_path), "--workspace", "nope", stderr=StringIO())
    assert missing_workspace.value.returncode == 2


def test_same_source_name_takes_new_versions_of_files(alice, corpus):
    first = ingest(str(corpus), "--workspace", "acme", "--source", "docs", "--wait")
    (corpus / "a.md").write_text("# Alpha\n\nAlpha now talks to Gamma.\n")
    second = ingest(str(corpus), "--workspace", "acme", "--source", "docs", "--wait")
    assert first["source"] == second["source"]
    assert second["documents"] == 2
    text = Document.objects.get(source_id=second["source"], path="corpus/a.md").text
    assert "Gamma" in text


def test_status_reports_sources_as_json(alice, corpus):
    result = ingest(str(corpus), "--workspace", "acme", "--wait")
    out = StringIO()
    call_command("status", str(result["source"]), "--workspace", "acme", "--json", stdout=out)
    status = json.loads(out.getvalue())
    assert status["status"] == "done"
    assert status["counters"]["documents"] == 2
    out = StringIO()
    call_command("status", "--workspace", "acme", stdout=out)
    assert "docs 2/2" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("status", "999999", "--workspace", "acme", stdout=StringIO())
