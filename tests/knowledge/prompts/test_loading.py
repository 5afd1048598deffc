"""The prompt files and their one loader: every prompt the code names is a file that loads,
every file is named by the code, and a name or version that is not there is an error."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.conf import settings

from knowledge.prompts import FILES, PROMPTS_DIR, PromptNotFound, load_prompt, load_prompts

ROOT = Path(settings.BASE_DIR)
APPS = ("config", "explorer", "agents", "knowledge", "ingest", "workspaces", "system")


def names_the_code_loads() -> set[str]:
    """The literal names of every `load_prompt("…", …)` call in the apps."""
    names = set()
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", getattr(node.func, "attr", "")) == "load_prompt"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    names.add(node.args[0].value)
    return names


def test_every_prompt_the_code_names_exists_and_loads():
    named = names_the_code_loads() | {name.removesuffix(".txt") for name in FILES}
    assert {"answer_system", "answer_user", "community_summary_system"} <= named
    for name in named:
        assert load_prompt(name, version="v1").strip(), name
    assert load_prompts(settings.EXTRACTION_PROMPT_VERSION).extract


def test_every_prompt_file_is_named_by_the_code():
    files = {path.stem for path in (PROMPTS_DIR / "v1").glob("*.txt")}
    assert files == names_the_code_loads() | {name.removesuffix(".txt") for name in FILES}


def test_an_unknown_name_or_version_raises():
    with pytest.raises(PromptNotFound, match="no_such_prompt"):
        load_prompt("no_such_prompt", version="v1")
    with pytest.raises(PromptNotFound, match="Invalid prompt name"):
        load_prompt("../v1/system", version="v1")
    with pytest.raises(PromptNotFound, match="Invalid prompt version"):
        load_prompt("system", version="../v1")
    with pytest.raises(PromptNotFound, match=r"must hold system\.txt"):
        load_prompts("v0-missing")
