"""The production path: deploy checks pass, static files build offline, secrets are required."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

from tests.support import MANAGE_PY

PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "graph.example.org",
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, MANAGE_PY, *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
    )


def test_production_settings_pass_djangos_deploy_checks():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("missing", ["DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS"])
def test_production_refuses_to_start_without_secret_key_or_hosts(missing):
    env = {**PRODUCTION_ENV, missing: ""}
    result = manage("check", env=env)
    assert result.returncode != 0
    assert missing in result.stderr


def test_collectstatic_bundles_the_npm_built_vendor_files(tmp_path):
    with override_settings(
        STATIC_ROOT=tmp_path,
        STORAGES={
            **settings.STORAGES,
            "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
        },
    ):
        call_command("collectstatic", interactive=False, verbosity=0)
    for name in (
        "vendor/htmx.min.js",
        "vendor/d3.js",
        "js/csrf.js",
        "css/app.css",
        "ninja/swagger-ui-bundle.js",
    ):
        assert (tmp_path / name).stat().st_size > 0, name
    assert "forceSimulation" in (tmp_path / "vendor/d3.js").read_text()
    assert (tmp_path / "staticfiles.json").exists()
