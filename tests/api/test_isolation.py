"""Tenancy, checked for every route of the API at once: each path operation mounted on
`config.api.api` (every app's, found by walking its routers, so a new route is covered
without editing this file) is called

- with another workspace's slug and that workspace's real ids: 404;
- with the caller's own slug but another workspace's real ids in the path: 404;
- with the caller's own slug and ids (reads only): it works, so the 404s above are about
  the workspace and not a broken request;
- without credentials: 401.

Bodies are the smallest valid ones built from the route's OpenAPI schema, with ids taken
from the other workspace, so validation never answers before the access check does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from config.api import api
from knowledge.actions.communities import do_compute_communities
from knowledge.actions.curation.relations import do_edit_relation
from knowledge.models import EntityType, MergeSuggestion, TypeStatus
from tests.conftest import create_member
from tests.knowledge.graph_data import make_graph
from tests.support import module_rows

pytestmark = pytest.mark.django_db

PREFIX = "/api/v1"
OPENAPI = api.get_openapi_schema()
# Path parameters that name a row of a workspace; `kind` and the like are vocabulary.
ROW_PARAMS = {
    "entity_id", "source_id", "document_id", "token_id", "suggestion_id", "relation_id", "name",
    "event_id",
}  # fmt: skip


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # as in the OpenAPI document: /api/v1/workspaces/{slug}/...
    authenticated: bool

    @property
    def params(self) -> list[str]:
        return re.findall(r"{(\w+)}", self.path)

    @property
    def spec(self) -> dict[str, Any]:
        return OPENAPI["paths"][self.path][self.method.lower()]

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


def all_routes() -> list[Route]:
    routes = []
    for bound in api._get_bound_routers():
        for path, view in bound.path_operations.items():
            full = re.sub(r"/+", "/", f"{PREFIX}/{bound.prefix}/{path}").rstrip("/")
            for operation in view.operations:
                for method in operation.methods:
                    routes.append(Route(method, full, bool(operation.auth_callbacks)))
    return sorted(routes, key=str)


ROUTES = all_routes()
SCOPED = [r for r in ROUTES if "{slug}" in r.path]


def test_the_walk_finds_every_documented_operation():
    documented = {(m.upper(), p) for p, ops in OPENAPI["paths"].items() for m in ops}
    assert {(r.method, r.path) for r in ROUTES} == documented
    assert len(SCOPED) > 40


@dataclass
class Tenant:
    slug: str
    client: Client
    ids: dict[str, Any]


def populate(member, *, type_name: str) -> Tenant:
    built = make_graph(
        member.workspace,
        entities={"Ada Lovelace": "person", "Ada King": "person"},
        relations=[("Ada Lovelace", "Ada King", "related_to")],
    )
    first, second = sorted(e.pk for e in built.entities.values())
    suggestion = MergeSuggestion.objects.create(
        workspace=member.workspace, entity_a_id=first, entity_b_id=second, score=0.8
    )
    EntityType.objects.create(
        workspace=member.workspace, name=type_name, status=TypeStatus.PROPOSED
    )
    event = do_edit_relation(
        workspace=member.workspace, relation_id=built.relations[0].pk, description="Kin."
    )
    do_compute_communities(workspace=member.workspace)
    return Tenant(
        slug=member.workspace.slug,
        client=member.client(),
        ids={
            "entity_id": first,
            "entities": [first, second],
            "source_id": built.source.pk,
            "document_id": built.document.pk,
            "token_id": member.token.pk,
            "suggestion_id": suggestion.pk,
            "relation_id": built.relations[0].pk,
            "event_id": event.pk,
            "mention_id": built.entities["Ada Lovelace"].mentions.get().pk,
            "name": type_name,
            "kind": "entity-types",
            # a community of the stored map (numbers are per workspace: both have a "0")
            "key": "0",
        },
    )


@pytest.fixture(scope="module")
def tenants(django_db_setup, django_db_blocker) -> Iterator[tuple[Tenant, Tenant]]:
    """alice (acme) is the caller; globex (bob's) is the other workspace. Written once for
    the module's ~200 requests (`module_rows`): nothing a request writes reaches the next."""
    with module_rows(django_db_blocker):
        alice = create_member("alice", workspace="acme")
        bob = create_member("bob", workspace="globex")
        yield populate(alice, type_name="starship"), populate(bob, type_name="spaceport")


def minimal(schema: dict[str, Any], ids: dict[str, Any], field: str = "") -> Any:
    """The smallest value `schema` accepts; ids (and lists of ids) come from `ids`."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return minimal(OPENAPI["components"]["schemas"][name], ids, field)
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in schema:
            options = [s for s in schema[combinator] if s.get("type") != "null"]
            return minimal(options[0], ids, field)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {
            key: minimal(sub, ids, key)
            for key, sub in schema.get("properties", {}).items()
            if key in schema.get("required", [])
        }
    if kind == "array":
        if field == "entities":
            return ids["entities"]
        if field == "mention_ids":
            return [ids["mention_id"]]
        return [minimal(schema["items"], ids, field) for _ in range(schema.get("minItems", 0))]
    if kind == "integer":
        return ids.get(field, ids["entity_id"])
    if kind == "number":
        return max(schema.get("minimum", 1), 1)
    if kind == "boolean":
        return False
    return "x" * max(schema.get("minLength", 1), 1)


def request(client: Client, route: Route, slug: str, ids: dict[str, Any], query_ids=None):
    path = route.path
    for param in route.params:
        value = slug if param == "slug" else ids.get(param)
        assert value is not None, f"{route}: give populate() a value for {{{param}}}"
        path = path.replace(f"{{{param}}}", str(value))
    query_ids = query_ids or ids
    query = {}
    for param in route.spec.get("parameters", []):
        if param["in"] != "query" or not param.get("required"):
            continue
        if param["name"] == "ids":
            query["ids"] = ",".join(map(str, query_ids["entities"]))
        else:
            query[param["name"]] = minimal(param["schema"], query_ids, param["name"])
    if route.method == "GET":
        return client.get(path, query)
    kwargs: dict[str, Any] = {}
    body = route.spec.get("requestBody")
    if body:
        schema = body["content"].get("application/json", {}).get("schema", {})
        kwargs = {
            "data": json.dumps(minimal(schema, query_ids)),
            "content_type": "application/json",
        }
    if query:
        path += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    return getattr(client, route.method.lower())(path, **kwargs)


@pytest.mark.parametrize("route", SCOPED, ids=str)
def test_another_workspaces_slug_and_ids_answer_404(route, tenants):
    mine, theirs = tenants
    response = request(mine.client, route, theirs.slug, theirs.ids)
    assert response.status_code == 404, response.content
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("route", [r for r in SCOPED if set(r.params) & ROW_PARAMS], ids=str)
def test_another_workspaces_ids_under_my_slug_answer_404(route, tenants):
    mine, theirs = tenants
    ids = {**theirs.ids, "kind": "entity-types"}
    response = request(mine.client, route, mine.slug, ids)
    assert response.status_code == 404, response.content
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("route", [r for r in SCOPED if r.method == "GET"], ids=str)
def test_my_own_slug_and_ids_work_for_every_read(route, tenants):
    mine, _ = tenants
    response = request(mine.client, route, mine.slug, mine.ids)
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("route", [r for r in ROUTES if r.authenticated], ids=str)
def test_no_credentials_answer_401(route, tenants):
    mine, _ = tenants
    response = request(Client(), route, mine.slug, mine.ids)
    assert response.status_code == 401, response.content
    assert response.json()["error"]["code"] == "unauthenticated"


def test_query_ids_of_another_workspace_are_missing_or_left_out(tenants):
    mine, theirs = tenants
    base = f"{PREFIX}/workspaces/{mine.slug}"
    own, foreign = mine.ids["entity_id"], theirs.ids["entity_id"]
    assert mine.client.get(f"{base}/path?from={own}&to={foreign}").status_code == 404
    assert mine.client.get(f"{base}/path?from={foreign}&to={own}").status_code == 404
    graph = mine.client.get(f"{base}/subgraph?ids={foreign},{theirs.ids['entities'][1]}")
    assert graph.json() == {"nodes": [], "edges": [], "truncated": False}
    for query in (f"entity={foreign}", f"source={foreign}", f"target={foreign}"):
        assert mine.client.get(f"{base}/relations?{query}").json()["count"] == 0
    assert mine.client.get(f"{base}/entities?source={theirs.ids['source_id']}").json() == {
        "items": [],
        "count": 0,
    }
    merged = mine.client.post(
        f"{base}/entities/merge",
        data=json.dumps({"entities": [own, foreign]}),
        content_type="application/json",
    )
    assert merged.status_code == 404
