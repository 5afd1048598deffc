"""The OpenAPI document is a contract: paths, operation ids, parameters and schemas that
clients generate code from. `openapi_v1.json` is the document as it was before the API
modules were reorganised; the only differences allowed are the additions listed here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from config.api import api

SNAPSHOT = Path(__file__).with_name("openapi_v1.json")

# Endpoints added since the snapshot, and the component schemas only they use.
ADDED_PATHS = {"/api/v1/workspaces/{slug}/graph"}
ADDED_COMPONENTS = {"BulkGraphQuery", "BulkGraphIn", "BulkNodeOut", "BulkGraphOut"}
# Optional properties added to schemas since the snapshot (clients may ignore them):
# duplicates of content processed already, and the original each one shares.
ADDED_PROPERTIES = {
    "DocumentOut": {"duplicate_of_id", "duplicate_of_source_id"},
    "SourceDetailOut": {"duplicates"},
}
ADDED_COMPONENTS |= {"DuplicateDocument"}
# The quality report, and the health report's counts (vectors still to be backfilled).
ADDED_PATHS |= {"/api/v1/workspaces/{slug}/quality"}
ADDED_COMPONENTS |= {"QualityOut", "QualityShare", "QualitySource", "SuspiciousName"}
ADDED_PROPERTIES["HealthOut"] = {"counts"}
# Asking: answers with citations (JSON, or server-sent events).
ADDED_PATHS |= {"/api/v1/workspaces/{slug}/ask"}
ADDED_COMPONENTS |= {"AskIn", "AskOut", "AskErrorOut", "AskUsageOut", "AskEntityOut"}
ADDED_COMPONENTS |= {"AskRelationOut", "AskCitationOut", "AskPassageOut"}
# A passage's text as the Ask page reads it (code blocks apart, no Markdown marks).
ADDED_COMPONENTS |= {"AskPassageBlockOut"}
# Search narrowed to documents ingested within days (optional request fields).
ADDED_PROPERTIES["SearchIn"] = {"ingested_from", "ingested_to"}
# Relation curation: writes on the relation paths, reverse, and the undo of a relation change.
ADDED_PATHS |= {
    "/api/v1/workspaces/{slug}/relations/{relation_id}/reverse",
    "/api/v1/workspaces/{slug}/curation-events/{event_id}/undo",
}
ADDED_COMPONENTS |= {"RelationCurationResult", "RelationEventOut", "RelationIn", "RelationPatchIn"}
# The undo of any curation event (same path; its answer names the entity too).
ADDED_COMPONENTS |= {"UndoResult", "UndoEventOut"}
# The community map: one level of it, and one community's entities with stubs.
ADDED_PATHS |= {
    "/api/v1/workspaces/{slug}/communities/map",
    "/api/v1/workspaces/{slug}/communities/{key}/graph",
}
ADDED_COMPONENTS |= {"CommunityMapOut", "CommunityOut", "CommunityMemberOut", "CommunityLinkOut"}
ADDED_COMPONENTS |= {
    "CommunityOthersOut", "CommunityGraphOut", "CommunityStubOut", "CommunityNeighbourOut"
}  # fmt: skip
# Progress inside a document while a slice of a source's work runs (issue 20).
for _schema in ("SourceOut", "SourceCreated", "SourceDetailOut"):
    ADDED_PROPERTIES.setdefault(_schema, set()).add("activity")
# Methods added to paths the snapshot has.
ADDED_METHODS = {
    ("/api/v1/workspaces/{slug}/relations", "post"),
    ("/api/v1/workspaces/{slug}/relations/{relation_id}", "patch"),
    ("/api/v1/workspaces/{slug}/relations/{relation_id}", "delete"),
}
# Deleting a workspace (admin; in the background: 202 with its state).
ADDED_METHODS |= {("/api/v1/workspaces/{slug}", "delete")}
ADDED_COMPONENTS |= {"WorkspaceDeletionOut"}
# Parameters that gained values since the snapshot (and a new default): the entity search's
# `match` (words, the new default) and `order` (relevance, the new default). Every value
# the snapshot had is still accepted.
CHANGED_PARAMETERS = {("/api/v1/workspaces/{slug}/entities", "get"): {"match", "order"}}
# Free-form dicts whose description names keys added since the snapshot (duplicates,
# boilerplate_chunks, boilerplate_chars, text_chars): the old keys are all still there.
DESCRIBED_KEYS = {("SourceCreated", "counters"), ("SourceOut", "counters")}
DESCRIBED_KEYS |= {("SourceDetailOut", "counters")}
# Saved layouts of the explorer's views (read, save, forget: explorer/layout_api.py).
ADDED_PATHS |= {"/api/v1/workspaces/{slug}/layouts"}
ADDED_COMPONENTS |= {"LayoutIn", "LayoutOut", "LayoutSavedOut"}
# Workspace archives: export (a POST on the graph export's path) and import as a new one.
ADDED_PATHS |= {"/api/v1/workspaces/import"}
ADDED_METHODS |= {("/api/v1/workspaces/{slug}/export", "post")}
ADDED_COMPONENTS |= {"WorkspaceImported"}
# The health report's scheduled upkeep jobs (last and next run, outcome, message).
ADDED_PROPERTIES["HealthOut"] |= {"upkeep"}
ADDED_COMPONENTS |= {"UpkeepJobHealth"}
# A document's own date (issue 41): on documents and search hits, a filter and a recency
# preference of search (the ask schemas are additions of their own, above).
ADDED_PROPERTIES["DocumentOut"] |= {"published_at", "published_source"}
ADDED_PROPERTIES["SearchIn"] |= {"published_from", "published_to", "recency"}
ADDED_PROPERTIES["SearchChunkOut"] = {"published_at"}
# Optional multipart form fields added to upload bodies: each file's modification time.
ADDED_FORM_FIELDS = {
    ("/api/v1/workspaces/{slug}/sources", "post"): {"last_modified"},
    ("/api/v1/workspaces/{slug}/sources/{source_id}/documents", "post"): {"last_modified"},
}
# A source's learnt section labels, and a person's word on one (read, and PUT by editors).
ADDED_PATHS |= {"/api/v1/workspaces/{slug}/sources/{source_id}/section-labels"}
ADDED_COMPONENTS |= {"SectionLabelsOut", "SectionLabelOut", "SectionLabelIn"}
# What a source holds and gave (issue 41): documents, chunks, entities and its last change
# on every source answer, and the list's filters by tag, kind and status.
for _schema in ("SourceOut", "SourceCreated", "SourceDetailOut"):
    ADDED_PROPERTIES[_schema] |= {"document_count", "chunk_count", "entity_count", "updated_at"}
# Optional query parameters added to operations the snapshot has.
ADDED_PARAMETERS = {("/api/v1/workspaces/{slug}/sources", "get"): {"tag", "kind", "status"}}

# Guards on noise and cost (issue 41): a source's topic (relevance filter) and what it
# measured on each document, windows of known-only sources never sent, and the workspace's
# monthly LLM budget (read by members, set by admins).
for _schema in ("SourceOptionsIn", "SourceOut", "SourceCreated"):
    ADDED_PROPERTIES.setdefault(_schema, set()).add("topic")
ADDED_PROPERTIES["SourceDetailOut"].add("topic")
ADDED_PROPERTIES["DocumentOut"] |= {"topic_similarity", "off_topic"}
ADDED_PROPERTIES["WindowsOut"] = {"skipped_unknown"}
ADDED_PATHS |= {"/api/v1/workspaces/{slug}/llm-budget"}
ADDED_COMPONENTS |= {"LlmBudgetOut", "LlmBudgetIn", "PausedSourceOut"}

# Scheduled re-crawls (issue 41): a crawl's refresh interval, its next and last run, and
# what the round did to each page.
for _schema in ("SourceOut", "SourceCreated", "SourceDetailOut"):
    ADDED_PROPERTIES.setdefault(_schema, set()).update({"refresh_every", "next_run_at", "last_run"})
ADDED_PROPERTIES["SourceOptionsIn"].add("refresh_every")
ADDED_PROPERTIES["CrawlPageOut"] = {"run_change", "gone_at"}
ADDED_COMPONENTS |= {"LastRunOut"}

# Pages that need a browser (issue 41): a crawled page's verdict and whether it was rendered.
ADDED_PROPERTIES["DocumentOut"] |= {"needs_javascript", "rendered"}


def current_document() -> dict[str, Any]:
    schema = api.get_openapi_schema(path_prefix="/api/v1/")
    return json.loads(json.dumps(schema, default=str))


def differences(before: Any, after: Any, where: str = "") -> list[str]:
    """Readable paths to every value that differs (key order ignored, list order kept)."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after)):
            if key not in after:
                found.append(f"{where}/{key}: removed")
            elif key not in before:
                found.append(f"{where}/{key}: added")
            else:
                found += differences(before[key], after[key], f"{where}/{key}")
        return found
    return [] if before == after else [f"{where}: {before!r} -> {after!r}"]


def test_the_openapi_document_is_unchanged_apart_from_the_listed_additions() -> None:
    before = json.loads(SNAPSHOT.read_text())
    after = current_document()
    for path in ADDED_PATHS:
        assert path in after["paths"], f"{path} is listed as added but is not in the API"
        del after["paths"][path]
    for path, method in ADDED_METHODS:
        del after["paths"][path][method]
    for name in ADDED_COMPONENTS & set(after["components"]["schemas"]):
        del after["components"]["schemas"][name]
    for name, added in ADDED_PROPERTIES.items():
        component = after["components"]["schemas"][name]
        assert not added & set(component.get("required", [])), f"{name}: added as required"
        for field in added:
            del component["properties"][field]
    for (path, method), names in ADDED_PARAMETERS.items():
        parameters = after["paths"][path][method]["parameters"]
        added_ones = [p for p in parameters if p["name"] in names]
        assert {p["name"] for p in added_ones} == names
        assert not any(p["required"] for p in added_ones)
        after["paths"][path][method]["parameters"] = [
            p for p in parameters if p["name"] not in names
        ]
    for (path, method), fields in ADDED_FORM_FIELDS.items():
        form = after["paths"][path][method]["requestBody"]["content"]["multipart/form-data"]
        assert not fields & set(form["schema"].get("required", [])), f"{path}: added as required"
        for field in fields:
            del form["schema"]["properties"][field]
    for (path, method), changed in CHANGED_PARAMETERS.items():
        old, new = (
            {p["name"]: p for p in document["paths"][path][method]["parameters"]}
            for document in (before, after)
        )
        for name in changed:
            assert set(old[name]["schema"]["enum"]) < set(new[name]["schema"]["enum"])
        for document in (before, after):
            operation = document["paths"][path][method]
            operation["parameters"] = [
                p for p in operation["parameters"] if p["name"] not in changed
            ]
    for name, field in DESCRIBED_KEYS:
        old, new = (
            document["components"]["schemas"][name]["properties"][field]
            for document in (before, after)
        )
        assert set(old.pop("description").split(", ")) <= set(_keys(new.pop("description")))
    assert differences(before, after) == []


def _keys(description: str) -> list[str]:
    return re.findall(r"[a-z_]+", description)


def test_operation_ids_keep_the_names_clients_generated_code_from() -> None:
    ids = {
        operation["operationId"]
        for item in current_document()["paths"].values()
        for operation in item.values()
    }
    assert {
        "knowledge_api_patch_entity",
        "knowledge_graph_api_get_entity",
        "knowledge_retrieval_api_search",
        "knowledge_graph_api_export",
    } <= ids
