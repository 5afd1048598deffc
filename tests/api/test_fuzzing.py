"""Property-based fuzzing of the whole API from its own OpenAPI document (schemathesis):
no input, valid or not, makes any operation answer 5xx.

The schema is loaded from `/api/v1/openapi.json` of the real WSGI application, and every
operation is called in-process, authenticated with a real bearer token of a workspace
admin, against a workspace holding a small real graph. The slug is fixed (random slugs
would only ever meet the 404 of the access check); ids are tried both as generated and as
the workspace's real ones, so the handlers behind the checks run too. Hypothesis is
derandomized and keeps no example database, so a run is repeatable; a few examples per
operation and mode keep it to about a minute.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import DatabaseError, close_old_connections, transaction
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok

from knowledge.models import EntityType, MergeSuggestion, TypeStatus
from tests.knowledge.graph_data import make_graph
from workspaces.actions.tokens import do_create_api_token

EXAMPLES = {GenerationMode.POSITIVE: 8, GenerationMode.NEGATIVE: 5}


@pytest.fixture
def wsgi_app():
    """Django's WSGI application on the test's database connection: like Django's own test
    client, it must not close the connection (and the test's transaction) after a
    request."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def real_ids(alice) -> dict[str, Any]:
    built = make_graph(
        alice.workspace,
        entities={
            "Ada Lovelace": "person",
            "Ada King": "person",
            "Analytical Engine": "technology",
            "London": "location",
        },
        relations=[
            ("Ada Lovelace", "Analytical Engine", "related_to"),
            ("Ada King", "London", "located_in"),
            ("Analytical Engine", "London", "located_in"),
        ],
    )
    first, second = sorted(e.pk for e in built.entities.values())[:2]
    suggestion = MergeSuggestion.objects.create(
        workspace=alice.workspace, entity_a_id=first, entity_b_id=second, score=0.8
    )
    EntityType.objects.create(
        workspace=alice.workspace, name="starship", status=TypeStatus.PROPOSED
    )
    # A token the fuzzer may revoke; the one it authenticates with is never in a path.
    spare = do_create_api_token(workspace=alice.workspace, user=alice.user, name="spare").token
    return {
        "slug": alice.workspace.slug,
        "entity_id": first,
        "source_id": built.source.pk,
        "document_id": built.document.pk,
        "token_id": spare.pk,
        "suggestion_id": suggestion.pk,
        "relation_id": built.relations[0].pk,
        "name": "starship",
    }


def fuzz(operation, mode: GenerationMode, path_parameters: dict[str, Any], token: str) -> None:
    @given(operation.as_strategy(generation_mode=mode, path_parameters=path_parameters))
    @settings(
        max_examples=EXAMPLES[mode],
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def call(case) -> None:
        # Each request in its own savepoint: a request that fails in the database must not
        # abort the test's transaction for the requests after it.
        savepoint = transaction.savepoint_create()
        try:
            response = case.call(headers={"Authorization": f"Bearer {token}"})
        finally:
            try:
                transaction.savepoint_commit(savepoint)
            except DatabaseError:
                transaction.savepoint_rollback(savepoint)
        case.validate_response(response, checks=[not_a_server_error])

    call()


@pytest.mark.slow(reason="schemathesis over every operation of the OpenAPI document")
def test_no_operation_answers_a_server_error(alice, real_ids, wsgi_app):
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", wsgi_app)
    failures = []
    operations = 0
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        operation = result.ok()
        operations += 1
        params = {p.name for p in operation.path_parameters}
        variants = [{"slug": real_ids["slug"]} if "slug" in params else {}]
        if params - {"slug", "kind"}:
            variants.append({name: real_ids[name] for name in params if name in real_ids})
        for mode in EXAMPLES:
            for fixed in variants:
                try:
                    fuzz(operation, mode, fixed, alice.plaintext)
                except Unsatisfiable:
                    pass  # nothing to make invalid (no parameters, no body)
                except (Exception, BaseExceptionGroup) as exc:  # reported together below
                    failures.append(f"{operation.label} [{mode.value}, {sorted(fixed)}]:\n{exc}")
    assert operations > 40
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("patch", "/api/v1/workspaces/acme", {"name": "nul\u0000name"}),
        (
            "post",
            "/api/v1/workspaces/acme/schema/entity-types",
            {"name": "x", "examples": ["\u0000"]},
        ),
        ("get", "/api/v1/workspaces/acme/merge-suggestions?offset=4093714615149928644608", None),
        ("get", "/api/v1/workspaces/acme/curation-events?limit=4093714615149928644608", None),
        ("get", "/api/v1/workspaces/acme/entities?q=a%00b&match=contains", None),
        ("get", "/api/v1/workspaces/a%00b", None),
    ],
)
def test_values_the_database_refuses_are_invalid_input_not_server_errors(alice, method, path, body):
    """Found by the fuzzer: NUL characters and out-of-range numbers passed validation and
    reached PostgreSQL, which refused them (a 500)."""
    kwargs = {"data": json.dumps(body), "content_type": "application/json"} if body else {}
    response = getattr(alice.client(), method)(path, **kwargs)
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "invalid"


def test_any_iso_time_zone_offset_is_accepted_in_time_filters(alice):
    response = alice.client().get(
        "/api/v1/workspaces/acme/entities", {"seen_after": "0112-03-02T21:13:07.0-20:42"}
    )
    assert response.status_code == 200, response.content


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    subclasses: list[type] = cls.__subclasses__()
    for sub in subclasses:
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


def test_no_two_api_schemas_share_a_name():
    """The OpenAPI document names each schema component by its class name: two classes of
    one name become one component, and every endpoint using either is documented with
    whichever was registered last."""
    from ninja import Schema

    from config.api import api

    api.get_openapi_schema()  # every router imported
    ours = ("workspaces.", "ingest.", "knowledge.", "system.", "explorer.", "config.")
    by_name: dict[str, set[str]] = {}
    for cls in _subclasses(Schema):
        if cls.__module__.startswith(ours):
            by_name.setdefault(cls.__name__, set()).add(cls.__module__)
    assert {name: mods for name, mods in by_name.items() if len(mods) > 1} == {}
