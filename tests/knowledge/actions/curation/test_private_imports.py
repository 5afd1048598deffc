"""No module reaches into another module of the curation package for a private name: a
helper two modules share is public in the module that owns its subject (or in events.py
when it is about the log), so each module's `_`-names can change without a caller
elsewhere breaking. import-linter sees modules, not names, hence this scan.

Read as syntax over every package import-linter checks: `from knowledge.actions.curation.x
import _y`, the same relative (`from .x import _y`), and `x._y` where `x` is a module of
the package bound by an import.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
PACKAGE = "knowledge.actions.curation"


def source_files() -> Iterator[Path]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for package in config["tool"]["importlinter"]["root_packages"]:
        yield from sorted((ROOT / package).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_uses(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """`module.name` of each private name of the curation package that `source` (the
    text of `module`) imports or reads from a module it bound."""
    tree = ast.parse(source)
    found: list[str] = []
    bound: dict[str, str] = {}  # local name -> module of the package
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = _absolute(node, module, is_package=is_package)
            for alias in node.names:
                if _ours(origin) and _private(alias.name):
                    found.append(f"{origin}.{alias.name}")
                elif _ours(f"{origin}.{alias.name}"):
                    bound[alias.asname or alias.name] = f"{origin}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and _ours(alias.name):
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = _dotted(node.value)
            owner = bound.get(owner or "", owner)
            if owner and _ours(owner) and owner != module:
                found.append(f"{owner}.{node.attr}")
    return sorted(found)


def _absolute(node: ast.ImportFrom, module: str, *, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _ours(name: str | None) -> bool:
    return bool(name) and (name == PACKAGE or str(name).startswith(PACKAGE + "."))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.expr) -> str | None:
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(names)])


def test_no_module_imports_a_private_name_of_the_curation_package():
    found = {
        str(path.relative_to(ROOT)): uses
        for path in source_files()
        if (
            uses := private_uses(
                path.read_text(), module_name(path), is_package=path.name == "__init__.py"
            )
        )
    }
    assert found == {}


def test_the_scan_sees_private_imports_however_written():
    merge = f"{PACKAGE}.merge"
    caught = [
        f"from {PACKAGE}.entities import _one",
        "from .entities import _one",
        f"from {PACKAGE} import entities\nentities._one(ws, 1)",
        f"import {PACKAGE}.entities as people\npeople._one(ws, 1)",
        f"import {PACKAGE}.entities\n{PACKAGE}.entities._one(ws, 1)",
    ]
    for source in caught:
        assert private_uses(source, merge) == [f"{PACKAGE}.entities._one"], source
    allowed = [
        f"from {PACKAGE}.entities import locked_entities",
        "from knowledge.actions.evidence import _private_elsewhere",
        f"from {PACKAGE} import entities\nentities.locked_entities(ws, [1])",
        "def _own():\n    pass\n_own()",
        "from .events import __doc__",
    ]
    for source in allowed:
        assert private_uses(source, merge) == [], source
