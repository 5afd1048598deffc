"""Exports (API and `manage.py export`): every format parses back with the standard tools,
hostile names come through intact (or, where XML cannot carry a character, replaced —
never breaking the document), and the output is streamed in pieces."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from io import StringIO

import networkx as nx
import pytest
from django.core.management import CommandError, call_command

from knowledge.export import PIECE_CHARS, cypher_string, export_graph
from knowledge.models import Entity
from tests.knowledge.graph_data import chain, make_graph

BASE = "/api/v1/workspaces/acme"

HOSTILE = [
    'O\'Brien "the" <script>alert(1)</script>',
    "Line\nbreak\r\nand\ttab",
    "back`tick` & ampersand; <!-- ]]> -->",
    "'}) DETACH DELETE n //",
    "\\'}) MATCH (m) DETACH DELETE m //",
    '"}) DETACH DELETE n //',
    '=HYPERLINK("http://evil.example","x"),-1+2',
    "Ünïcødé 😀 name \u2028 and \u0085",
    "bell\x07 and vertical\x0btab",
]
# XML 1.0 cannot carry these at all (not even as references): they arrive as U+FFFD.
XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


@pytest.fixture
def hostile(alice):
    """Hostile entity names, types, relation types, descriptions and keywords in acme."""
    entities = dict.fromkeys(HOSTILE, "person")
    entities["Plain Target"] = "evil<type> `x` DETACH"
    relations = [(name, "Plain Target", "rel`}) DELETE r //") for name in HOSTILE]
    built = make_graph(alice.workspace, entities=entities, relations=relations)
    for relation in built.relations:
        relation.description = relation.source.name  # hostile too
        relation.keywords = [relation.source.name, "plain"]
        relation.save()
    return built


def body_of(response) -> str:
    assert response.status_code == 200, response.content
    assert response.streaming
    return b"".join(response.streaming_content).decode("utf-8")


def test_json_export_parses_and_keeps_every_name_exactly(alice, hostile):
    response = alice.client().get(f"{BASE}/export?format=json")
    assert response["Content-Type"] == "application/json"
    assert re.fullmatch(
        r'attachment; filename="graphloom-acme-\d{8}-\d{6}\.json"',
        response["Content-Disposition"],
    )
    data = json.loads(body_of(response))
    assert data["format"] == "graphloom"
    assert data["workspace"] == "acme"
    assert sorted(e["name"] for e in data["entities"]) == sorted([*HOSTILE, "Plain Target"])
    assert set(data["entities"][0]) == {
        "id", "name", "type", "description", "aliases", "mention_count", "community",
        "source_ids", "first_seen_at", "last_seen_at",
    }  # fmt: skip
    by_id = {e["id"]: e["name"] for e in data["entities"]}
    assert len(data["relations"]) == len(HOSTILE)
    for relation in data["relations"]:
        assert relation["description"] == by_id[relation["source"]]
        assert relation["keywords"] == [by_id[relation["source"]], "plain"]
        assert relation["type"] == "rel`}) DELETE r //"


def test_graphml_export_parses_with_elementtree_and_networkx(alice, hostile):
    response = alice.client().get(f"{BASE}/export?format=graphml")
    assert response["Content-Type"].startswith("application/graphml+xml")
    text = body_of(response)
    root = ET.fromstring(text.encode("utf-8"))  # noqa: S314 (our own output)
    assert root.tag == "{http://graphml.graphdrawing.org/xmlns}graphml"
    assert not root.findall(".//script")  # the <script> stayed text

    graph = nx.read_graphml(io.BytesIO(text.encode("utf-8")))
    names = sorted(data["name"] for _, data in graph.nodes(data=True))
    expected = sorted(XML_FORBIDDEN.sub("\ufffd", n) for n in [*HOSTILE, "Plain Target"])
    assert names == expected
    assert "Line\nbreak\r\nand\ttab" in names  # carriage return kept, not normalised
    plain = next(n for n, d in graph.nodes(data=True) if d["name"] == "Plain Target")
    assert graph.nodes[plain]["type"] == "evil<type> `x` DETACH"
    assert graph.in_degree(plain) == len(HOSTILE)
    for source, _, data in graph.edges(data=True):
        assert data["type"] == "rel`}) DELETE r //"
        assert data["description"] == graph.nodes[source]["name"]
        assert json.loads(data["keywords"])[1] == "plain"
        assert data["weight"] == pytest.approx(0.8)
    first = next(d for _, d in graph.nodes(data=True))
    assert isinstance(first["mention_count"], int)


def test_csv_export_is_one_table_per_part_and_round_trips(alice, hostile):
    client = alice.client()
    entities = body_of(client.get(f"{BASE}/export?format=csv&part=entities"))
    rows = list(csv.reader(StringIO(entities, newline="")))
    assert rows[0] == [
        "id", "name", "type", "description", "aliases", "mention_count", "community",
        "source_ids", "first_seen_at", "last_seen_at",
    ]  # fmt: skip
    assert sorted(r[1] for r in rows[1:]) == sorted([*HOSTILE, "Plain Target"])
    assert all(json.loads(r[4]) == [] for r in rows[1:])

    relations = body_of(client.get(f"{BASE}/export?format=csv&part=relations"))
    rows = list(csv.reader(StringIO(relations, newline="")))
    assert rows[0] == [
        "id", "source", "target", "type", "description", "keywords", "weight", "evidence_count",
    ]  # fmt: skip
    assert sorted(r[4] for r in rows[1:]) == sorted(HOSTILE)
    assert {json.loads(r[5])[0] for r in rows[1:]} == set(HOSTILE)

    missing = client.get(f"{BASE}/export?format=csv")
    assert missing.status_code == 422
    assert "part" in missing.json()["error"]["message"]
    assert client.get(f"{BASE}/export?format=xml").status_code == 422


# A Cypher string literal as the export writes it, and the escapes it may contain.
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'")
_ESCAPE = re.compile(r"\\(u[0-9a-f]{4}|U[0-9a-f]{8}|[\\'\"])")
_NODE = re.compile(
    r"MERGE \(n:Entity \{workspace: \?, id: \d+\}\) SET "
    r"(?:n\.[a-z_]+ = (?:\?|-?\d+(?:\.\d+)?|\[(?:(?:\?|\d+)(?:, (?:\?|\d+))*)?\])(?:, |))+"
    r"(?:, n:[A-Za-z][A-Za-z0-9_]*)?;"
)
_EDGE = re.compile(
    r"MATCH \(a:Entity \{workspace: \?, id: \d+\}\), \(b:Entity \{workspace: \?, id: \d+\}\) "
    r"MERGE \(a\)-\[r:[A-Z][A-Z0-9_]* \{id: \d+\}\]->\(b\) SET "
    r"(?:r\.[a-z_]+ = (?:\?|-?\d+(?:\.\d+)?|\[(?:(?:\?|\d+)(?:, (?:\?|\d+))*)?\])(?:, |))+;"
)


def decode_literal(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return chr(int(code[1:], 16)) if code[0] in "uU" else code

    return _ESCAPE.sub(one, body)


def test_cypher_export_keeps_hostile_text_inside_string_literals(alice, hostile):
    response = alice.client().get(f"{BASE}/export?format=cypher")
    text = body_of(response)
    statements = text.splitlines()
    assert statements[0].startswith("//")
    assert statements[1].startswith("CREATE INDEX graphloom_entity_id IF NOT EXISTS")
    literals: list[str] = []
    for statement in statements[2:]:
        # Outside the literals only the export's own structure remains: no hostile text
        # reached the code, whatever quotes, backslashes or backticks it held.
        skeleton = _LITERAL.sub("?", statement)
        assert _NODE.fullmatch(skeleton) or _EDGE.fullmatch(skeleton), statement
        for raw in _LITERAL.findall(statement):
            assert re.fullmatch(r"[\x20-\x7e]*", raw)  # printable ASCII only
            literals.append(decode_literal(raw))
    for name in [*HOSTILE, "Plain Target", "evil<type> `x` DETACH", "rel`}) DELETE r //"]:
        assert name in literals
    assert ":EvilTypeXDetach" in text  # the type as a label: letters and digits only
    assert "[r:REL_DELETE_R {id:" in text
    assert "DETACH DELETE n" not in _LITERAL.sub("?", text)


def test_cypher_string_escapes_quotes_backslashes_and_everything_outside_ascii():
    assert cypher_string("plain") == "'plain'"
    assert cypher_string("it's") == "'it\\'s'"
    assert cypher_string("a\\'b") == "'a\\\\\\'b'"
    assert cypher_string("`\n") == "'\\u0060\\u000a'"
    assert cypher_string("😀") == "'\\U0001f600'"


def test_export_streams_in_pieces_and_reads_nothing_before_it_is_consumed(
    alice, django_assert_num_queries
):
    chain(alice.workspace, 400, prefix="A rather long entity name to fill the export")
    with django_assert_num_queries(0):
        result = export_graph(alice.workspace, fmt="json")
    pieces = list(result.pieces)
    assert len(pieces) >= 2
    assert all(len(p) < 2 * PIECE_CHARS for p in pieces)
    data = json.loads("".join(pieces))
    assert len(data["entities"]) == 400
    assert len(data["relations"]) == 399


def test_only_active_entities_and_edges_between_them_are_exported(alice):
    built = chain(alice.workspace, 3)
    middle = built.entities["Node 001"]
    Entity.objects.filter(pk=middle.pk).update(state="deleted")
    data = json.loads(body_of(alice.client().get(f"{BASE}/export")))
    assert sorted(e["name"] for e in data["entities"]) == ["Node 000", "Node 002"]
    assert data["relations"] == []


def test_viewers_may_export_and_strangers_get_404(alice, bob, make_member):
    chain(alice.workspace, 2)
    viewer = make_member("vera", workspace="acme", role="viewer")
    assert viewer.client().get(f"{BASE}/export?format=cypher").status_code == 200
    assert bob.client().get(f"{BASE}/export").status_code == 404


# --- manage.py export ---------------------------------------------------------------------------


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("export", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_export_command_writes_the_same_formats_to_a_file_or_stdout(alice, hostile, tmp_path):
    target = tmp_path / "graph.graphml"
    _, err = run("--workspace", "acme", "--format", "graphml", "--output", str(target))
    assert "Wrote" in err
    graph = nx.read_graphml(target)
    assert graph.number_of_nodes() == len(HOSTILE) + 1
    assert not list(tmp_path.glob(".*partial"))

    out, _ = run("--workspace", "acme", "--format", "json")
    api = json.loads(body_of(alice.client().get(f"{BASE}/export?format=json")))
    cli = json.loads(out)
    assert cli["entities"] == api["entities"]
    assert cli["relations"] == api["relations"]

    out, _ = run("--workspace", "acme", "--format", "csv", "--part", "relations")
    assert len(list(csv.reader(StringIO(out, newline="")))) == len(HOSTILE) + 1


def test_export_command_exit_codes(alice, tmp_path):
    with pytest.raises(CommandError) as unknown:
        run("--workspace", "nope", "--format", "json")
    assert unknown.value.returncode == 2
    with pytest.raises(CommandError) as no_part:
        run("--workspace", "acme", "--format", "csv")
    assert no_part.value.returncode == 2
    assert "--part" in str(no_part.value)
    with pytest.raises(CommandError) as stray_part:
        run("--workspace", "acme", "--format", "json", "--part", "entities")
    assert stray_part.value.returncode == 2
    unwritable = tmp_path / "missing-dir" / "graph.json"
    with pytest.raises(CommandError) as failed:
        run("--workspace", "acme", "--format", "json", "--output", str(unwritable))
    assert failed.value.returncode == 1
    assert not unwritable.exists()
