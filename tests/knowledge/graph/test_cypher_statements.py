"""Every Cypher statement the Neo4j backend can send, checked by Neo4j's own tools.

No Neo4j server runs in `make test`, so the statements are validated with Neo4j's Cypher
language support (@neo4j-cypher/language-support: its parser and semantic analysis, Cypher
5) through scripts/cypher_check.mjs. Deliberately broken statements must fail the same
check, so it cannot pass by checking nothing, and a guard makes sure no Cypher text in the
backend or the projection escapes the collector. Without `node` or the package the check is
skipped, unless `make` installed node_modules or GRAPHLOOM_REQUIRE_CYPHER_CHECK is set:
then it fails. The queries' behaviour is the conformance suite's, against a real server
(GRAPHLOOM_TEST_NEO4J_URL; test_neo4j_backend.py).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from knowledge.graph import neo4j, sync
from knowledge.graph.neo4j import CHECKED_PATH_HOPS, PARAMETERS, all_statements
from knowledge.retrieval.hydration import PATH_MAX_HOPS
from knowledge.selectors.graph import MAX_PATH_HOPS

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "cypher_check.mjs"
PACKAGE = ROOT / "node_modules" / "@neo4j-cypher" / "language-support" / "package.json"
# Written by `make` once `npm ci` has installed node_modules (Makefile: node-deps).
NODE_DEPS_STAMP = ROOT / "node_modules" / ".installed"
STRICT = bool(os.environ.get("GRAPHLOOM_REQUIRE_CYPHER_CHECK")) or NODE_DEPS_STAMP.exists()

# How Cypher text is told from the modules' other strings: a keyword in upper case, a
# parameter, or a pattern over the projection's label or relationship type.
CYPHER_TEXT = re.compile(
    r"\b(MATCH|MERGE|UNWIND|CREATE|RETURN|DELETE|SET|CALL|WHERE|WITH|ORDER BY|LIMIT|AS|AND|IN)\b"
    r"|\$\w|:(Entity|REL)\b"
)


def run_check(statements: list[tuple[str, str]]) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    missing = "node is not on PATH" if node is None else None
    if node is not None and not PACKAGE.exists():
        missing = "@neo4j-cypher/language-support is not installed (npm ci)"
    if missing:
        if STRICT:
            pytest.fail(f"the Cypher check cannot run: {missing}")
        pytest.skip(f"the Cypher check cannot run: {missing}")
    payload = {
        "statements": [{"name": name, "cypher": cypher} for name, cypher in statements],
        "parameters": list(PARAMETERS),
    }
    return subprocess.run(
        [str(node), str(SCRIPT)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


@pytest.mark.slow(reason="Node and Neo4j's language support, once per statement batch")
def test_every_statement_the_backend_can_send_passes_neo4js_cypher_check():
    statements = all_statements()
    result = run_check(statements)
    assert result.returncode == 0, f"Neo4j's Cypher check failed:\n{result.stdout}{result.stderr}"
    assert f"{len(statements)} statements checked: {len(statements)} clean" in result.stdout


BROKEN = {
    "syntax error": (
        "MATCH (e:Entity RETURN e",
        "Invalid input 'RETURN'",
    ),
    "undefined variable": (
        "MATCH (e:Entity) WHERE e.workspace_id = $workspace_id RETURN x.id AS id",
        "Variable `x` not defined",
    ),
    "undeclared parameter": (
        "MATCH (e:Entity) WHERE e.workspace_id = $workspace RETURN e.id AS id",
        "Parameter $workspace is not defined",
    ),
    "unknown label": (
        "MATCH (e:Entiy) WHERE e.workspace_id = $workspace_id RETURN e.id AS id",
        "Label Entiy is not present in the database",
    ),
    "unknown function": (
        "MATCH (e:Entity) WHERE e.workspace_id = $workspace_id RETURN coalesc(e.name, '')",
        "Function coalesc is not present in the database",
    ),
    "wrong argument count": (
        "MATCH (e:Entity) WHERE e.workspace_id = $workspace_id RETURN size() AS n",
        "Insufficient parameters for function 'size'",
    ),
    "aggregation mixed with a grouping key it hides": (
        "MATCH (e:Entity) WHERE e.workspace_id = $workspace_id RETURN e.id + count(*) AS n",
        "aggregat",
    ),
}


@pytest.mark.slow
def test_deliberately_broken_statements_fail_the_check_each_with_its_reason():
    clean = ("clean", "MATCH (e:Entity) WHERE e.workspace_id = $workspace_id RETURN e.id AS id")
    broken = [(name, cypher) for name, (cypher, _) in BROKEN.items()]
    result = run_check([clean, *broken])
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.stdout
    assert "ok    clean\n" in report
    for name, (_, reason) in BROKEN.items():
        section = report.split(f"FAIL  {name}\n", 1)
        assert len(section) == 2, f"{name!r} was not reported as failing:\n{report}"
        problems = section[1].split("\nFAIL  ", 1)[0].split("\nok    ", 1)[0]
        assert reason.lower() in problems.lower(), f"{name}: {reason!r} not in\n{problems}"
    assert f"{len(BROKEN) + 1} statements checked: 1 clean, {len(BROKEN)} with problems" in report


def test_unusable_input_is_an_error_not_a_pass():
    result = run_check([])
    assert result.returncode == 2
    assert "expected" in result.stderr


def _cypher_literals(module) -> list[str]:
    """The string literals of a module's source (f-strings by their literal parts) that
    contain a Cypher clause keyword, docstrings left out."""
    tree = ast.parse(Path(module.__file__).read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and CYPHER_TEXT.search(node.value)
    ]


@pytest.mark.parametrize("module", [neo4j, sync], ids=["neo4j", "sync"])
def test_no_cypher_text_in_the_backend_or_the_projection_escapes_the_check(module):
    collected = [cypher for _, cypher in all_statements()]
    escaped = [text for text in _cypher_literals(module) if not any(text in c for c in collected)]
    assert not escaped, f"Cypher text not reached by all_statements(): {escaped}"


def test_the_guard_sees_the_backends_statements():
    literals = _cypher_literals(neo4j)
    # The constants, the builders' fragments (per direction, per filter): a guard that
    # found nothing would pass whatever the collector missed.
    assert neo4j.UPSERT_RELATIONS in literals
    assert " AND r.type IN $types" in literals
    assert "\nLIMIT $max_edges" in literals
    assert len(literals) >= 25


def test_the_collector_renders_every_variant_the_backend_can_build():
    names = [name for name, _ in all_statements()]
    assert len(names) == len(set(names))
    # Every path bound the API, the agents and retrieval can ask for.
    assert max(MAX_PATH_HOPS, PATH_MAX_HOPS) <= CHECKED_PATH_HOPS
    statements = dict(all_statements())
    for hops in range(1, CHECKED_PATH_HOPS + 1):
        assert f"[:REL*..{hops}]" in statements[f"shortest path {hops} hops typed"]


def test_every_declared_parameter_is_one_a_statement_uses():
    used = {m for _, cypher in all_statements() for m in re.findall(r"\$(\w+)", cypher)}
    assert used == set(PARAMETERS)
