"""The layering of docs/design.md, as the import contracts in pyproject.toml: the code keeps
them, and the contracts really catch an import against the grain.

The second half is what makes the first worth anything: the same contracts run on a copy of
the packages into which one upward import was written, and must fail naming it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))
# The packages the contracts cover, as pyproject.toml lists them (a new app is copied too).
PACKAGES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "root_packages"
]

pytestmark = pytest.mark.slow


def lint_imports(directory: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports over the packages in `directory`, with the contracts of its
    pyproject.toml (the checker puts the directory first on the import path)."""
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo", str(directory / "pyproject.toml")],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_code_keeps_every_layering_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.fixture(scope="module")
def copy_of_the_code(tmp_path_factory) -> Path:
    """The packages' Python files and the real pyproject.toml, in a directory of their own."""
    directory = tmp_path_factory.mktemp("layering")
    shutil.copy(ROOT / "pyproject.toml", directory / "pyproject.toml")
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, directory / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return directory


@pytest.mark.parametrize(
    ("importer", "imported", "contract"),
    [
        ("system/enqueue.py", "config.urls", "Apps depend downward only"),
        ("ingest/selectors.py", "knowledge.models", "Apps depend downward only"),
        ("ingest/models.py", "ingest.actions.sources", "Ingest: callers > actions"),
        ("knowledge/models/__init__.py", "knowledge.selectors", "Knowledge: callers > actions"),
        ("knowledge/actions/ask.py", "httpx", "The LLM is reached through system.llm"),
        ("knowledge/consolidation/decide.py", "knowledge.models", "Match decisions ask their"),
    ],
)
def test_an_upward_import_breaks_its_contract(copy_of_the_code, importer, imported, contract):
    module = copy_of_the_code / importer
    original = module.read_text()
    module.write_text(f"{original}\nimport {imported}  # against the grain\n")
    try:
        result = lint_imports(copy_of_the_code)
    finally:
        module.write_text(original)
    importer_name = importer.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    assert result.returncode == 1, result.stdout + result.stderr
    assert contract in result.stdout
    assert "BROKEN" in result.stdout
    assert f"{importer_name} -> {imported}" in result.stdout, result.stdout


def test_the_copy_keeps_the_contracts_without_the_added_import(copy_of_the_code):
    """The failures above come from the added import, not from the copy itself."""
    result = lint_imports(copy_of_the_code)
    assert result.returncode == 0, result.stdout + result.stderr
