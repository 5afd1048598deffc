"""What the source, source-detail and document page tests share: an upload made through
the real action, its bytes, hostile text to show escaped, and uploads kept in a temporary
media folder (the fixture is autouse where a test module imports it)."""

from __future__ import annotations

import pytest

from ingest.actions.sources import do_create_upload_source
from ingest.models import Source

MARKDOWN = b"# Harbour notes\n\nThe lighthouse keeper met the harbour master at dawn.\n"
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(autouse=True)
def media_root(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"


def make_upload(member, *files: tuple[str, bytes], name: str = "") -> Source:
    source, _ = do_create_upload_source(
        workspace=member.workspace,
        files=[(path, [data]) for path, data in files],
        name=name,
        enqueue=False,
    )
    return source
