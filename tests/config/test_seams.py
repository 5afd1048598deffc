"""The seams of the lower apps (config/settings/base.py): every function an app plugs into
them (chunk deletion and moves, source figures, workspace deletion, health counts, metrics,
upkeep jobs) is in that app's hooks.py, so one module per app lists them all, and each
loads."""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from django.utils.module_loading import import_string

SEAMS = (
    "INGEST_DELETION_HOOKS",
    "INGEST_CHUNK_MOVE_HOOKS",
    "WORKSPACE_DELETION_HOOKS",
    "HEALTH_COUNTS",
    "METRICS_COLLECTORS",
    "INGEST_SOURCE_FIGURES",
)
APPS = ("system", "workspaces", "ingest", "knowledge", "agents", "explorer")


def seam_providers() -> Iterator[tuple[str, str]]:
    for seam in SEAMS:
        for path in getattr(settings, seam):
            yield seam, path
    for job, spec in settings.UPKEEP_JOBS.items():
        yield f"UPKEEP_JOBS[{job!r}]", str(spec["run"])


def test_every_seam_provider_is_in_its_apps_hooks_module():
    providers = list(seam_providers())
    assert len(providers) >= 12
    elsewhere = [
        (seam, path)
        for seam, path in providers
        if path.rsplit(".", 1)[0] not in {f"{app}.hooks" for app in APPS}
    ]
    assert not elsewhere
    for seam, path in providers:
        assert callable(import_string(path)), (seam, path)
