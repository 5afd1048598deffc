"""The documentation-quality benchmark itself; run it through bench/doc_quality.py."""

from __future__ import annotations

import argparse
import cProfile
import functools
import hashlib
import json
import random
import re
import threading
import time
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.db import connection
from django.db.models import Sum

from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.pipeline import do_process_documents
from ingest.chunking import chunk_text
from ingest.dispatch import document_groups
from ingest.embeddings import get_embedder, get_token_counter
from ingest.models import PENDING, Chunk, CrawlPage, Document
from knowledge.actions.evidence import NOTE_FRAGMENT
from knowledge.consolidation.keys import suffixes, thresholds
from knowledge.consolidation.matching import EMBEDDING_REASON, TYPES_REASON
from knowledge.consolidation.names.code_names import code_paths_differ
from knowledge.consolidation.names.normalise import same_spelling
from knowledge.consolidation.names.similarity import name_similarity
from knowledge.extraction.entity_types import FALLBACK_TYPE
from knowledge.extraction.offline import get_offline_extractor
from knowledge.models import (
    CurationEvent,
    Entity,
    EntityType,
    ExtractionRun,
    Mention,
    MergeSuggestion,
    Relation,
)
from knowledge.selectors.quality import get_quality_report
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

_WORD = re.compile(r"\w+")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


def serve(root: Path) -> ThreadingHTTPServer:
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def crawl(
    root: Path, max_pages: int, *, start: str = "index.html", allow: tuple[str, ...] = ()
) -> tuple[Any, Any, float]:
    server = serve(root)
    url = f"http://127.0.0.1:{server.server_address[1]}/{start}"
    workspace = do_create_workspace(slug=f"docs-{time.time_ns()}")
    config = validate_crawl_settings(
        url=url, mode="recursive", max_pages=max_pages, max_depth=100, rate=0, allow=allow
    )
    source = do_create_crawl_source(workspace=workspace, crawl=config)
    do_start_crawl(source=source, enqueue=False)
    started = time.perf_counter()
    do_run_crawl(source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids))
    drain(source)
    elapsed = time.perf_counter() - started
    server.shutdown()
    return workspace, source, elapsed


def drain(source: Any) -> None:
    """Process what went round again: pages chunked before the text they share with later
    pages was known to repeat are re-chunked (ingest/actions/boilerplate.py), as a worker
    would pick them up from the queue."""
    for _ in range(5):
        pending = Document.objects.filter(source=source, status__in=PENDING)
        groups = document_groups(pending.values_list("pk", flat=True))
        if not groups:
            return
        for group in groups:
            do_process_documents(document_ids=group)


def _has_field(model: Any, name: str) -> bool:
    return any(f.name == name for f in model._meta.get_fields())


_MARKDOWN_HEADING = re.compile(r"(#{1,6})\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class CodeMarks:
    """What a document's ``` code blocks hold that a chunker could mistake: the titles of
    its "# comment" lines, and where its opening fences end."""

    comments: frozenset[str]
    opening_fence_ends: frozenset[int]

    @classmethod
    def of(cls, text: str) -> CodeMarks:
        comments, ends, code, position = set(), set(), False, 0
        for line in text.split("\n"):
            stripped = line.strip()
            if stripped.startswith("```"):
                code = not code
                if code:
                    ends.add(position + len(line.rstrip()))
            elif code and (heading := _MARKDOWN_HEADING.match(stripped)):
                comments.add(heading.group(2))
            position += len(line) + 1
        return cls(frozenset(comments), frozenset(ends))

    def heads(self, path: Any) -> bool:
        return any(title in self.comments for title in path or ())


def code_comment_headings(chunks: Any) -> int:
    """Chunks whose heading path holds a "# comment" of a code block of their document (the
    chunker once took those for headings)."""
    marks = {
        pk: CodeMarks.of(text)
        for pk, text in Document.objects.filter(pk__in=chunks.values("document_id")).values_list(
            "pk", "text"
        )
    }
    return sum(
        marks[document].heads(path)
        for document, path in chunks.values_list("document_id", "heading_path")
    )


def headings(slug: str | None) -> dict[str, Any]:
    """A crawl's chunks as stored against the current chunker on the same documents' text:
    how many chunks, how many end with the opening fence of a code block (its code in the
    next chunk), and how many have a code block's "# comment" in their heading path."""
    workspace = _crawl_workspace(slug)
    stored = Chunk.objects.filter(workspace=workspace, boilerplate=False)
    texts = dict(
        Document.objects.filter(pk__in=stored.values("document_id"))
        .exclude(text="")
        .values_list("pk", "text")
    )
    marks = {pk: CodeMarks.of(text) for pk, text in texts.items()}
    counter, budget = get_token_counter()
    now = [
        (pk, span.end, span.heading_path)
        for pk, text in texts.items()
        for span in chunk_text(text, counter=counter, max_tokens=budget, overlap_tokens=32)
    ]
    before = list(stored.values_list("document_id", "char_end", "heading_path"))
    return {
        "workspace": workspace.slug,
        "documents": len(texts),
        "stored": _chunk_marks(before, marks),
        "chunked_now": _chunk_marks(now, marks),
    }


def _chunk_marks(chunks: list[tuple[int, int, Any]], marks: dict[int, CodeMarks]) -> dict[str, int]:
    known = [(marks[pk], end, path) for pk, end, path in chunks if pk in marks]
    return {
        "chunks": len(chunks),
        "ending_with_an_opening_fence": sum(end in m.opening_fence_ends for m, end, _ in known),
        "headed_by_code_comments": sum(m.heads(path) for m, _, path in known),
    }


def figures(workspace: Any, source: Any, elapsed: float) -> dict[str, Any]:
    chunks = Chunk.objects.filter(workspace=workspace)
    boilerplate = _has_field(Chunk, "boilerplate")
    content = chunks.filter(boilerplate=False) if boilerplate else chunks
    words = sum(len(_WORD.findall(text)) for text in content.values_list("text", flat=True))
    entities = Entity.objects.filter(workspace=workspace, state="active")
    relations = Relation.objects.filter(workspace=workspace, state="active")
    runs = ExtractionRun.objects.filter(workspace=workspace)
    seconds = (runs.aggregate(ms=Sum("duration_ms"))["ms"] or 0) / 1000
    typed = relations.exclude(type__name="related_to").count()
    return {
        "pages": CrawlPage.objects.filter(source=source, status="ingested").count(),
        "seconds": round(elapsed, 1),
        "chunks": chunks.count(),
        "boilerplate_chunks": chunks.filter(boilerplate=True).count() if boilerplate else None,
        "boilerplate_chunks_extracted": (
            Mention.objects.filter(workspace=workspace, chunk__boilerplate=True).count()
            if boilerplate
            else None
        ),
        "words": words,
        "chunks_headed_by_code_comments": code_comment_headings(content),
        "mentions_inside_words": mentions_inside_words(workspace),
        "names_split_by_type": names_split_by_type(workspace),
        "descriptions_mid_sentence": descriptions_mid_sentence(workspace),
        "entities": entities.count(),
        "entities_per_1000_words": round(1000 * entities.count() / max(words, 1), 2),
        "relations": relations.count(),
        "typed_relation_share": round(typed / max(relations.count(), 1), 3),
        "windows": runs.count(),
        "extractor_windows_per_s": round(runs.count() / seconds, 2) if seconds else None,
        "quality": {
            key: value
            for key, value in get_quality_report(workspace, suspicious=10).items()
            if key not in {"workspace", "source"}
        },
        "top_hubs": [
            f"{name} ({type_name}, {degree})"
            for name, type_name, degree in entities.order_by("-degree", "name").values_list(
                "name", "type__name", "degree"
            )[:50]
        ],
    }


def sample(workspace: Any, size: int, seed: int) -> list[dict[str, Any]]:
    rows = list(
        Entity.objects.filter(workspace=workspace, state="active")
        .order_by("pk")
        .values_list("pk", "name", "type__name", "degree")
    )
    chosen = random.Random(seed).sample(rows, min(size, len(rows)))
    return [
        {"name": name, "type": type_name, "degree": degree, "name_ok": None, "type_ok": None}
        for _, name, type_name, degree in sorted(chosen, key=lambda r: r[1].casefold())
    ]


def score(path: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    labelled = [r for r in rows if r.get("name_ok") is not None]
    names = [r for r in labelled if r["name_ok"]]
    typed = [r for r in names if r.get("type_ok") is not None]
    return {
        "sample": len(rows),
        "labelled": len(labelled),
        "name_precision": round(len(names) / max(len(labelled), 1), 3),
        "type_precision": round(sum(1 for r in typed if r["type_ok"]) / max(len(typed), 1), 3),
    }


def recheck(path: Path, slug: str | None) -> dict[str, Any]:
    """Whether a labelled sample still describes a newer crawl: each labelled entity looked
    up by name (case-insensitive) among the crawl's active entities, with its type. When
    every one is there with the same type, the sample's labels (and so its precision
    figures) hold for the new graph's sample as they did; the rest are listed: with another
    type, merged into another entity (an alias of it now, with the survivor's name and
    type), or missing."""
    workspace = _crawl_workspace(slug)
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    active = Entity.objects.filter(workspace=workspace, state="active")
    types: dict[str, set[str]] = {}
    for name, type_name in active.values_list("name", "type__name").iterator():
        types.setdefault(name.casefold(), set()).add(type_name)
    held: dict[str, tuple[str, str]] = {}  # a merged name -> (its survivor's name, type)
    for name, type_name, aliases in active.exclude(aliases=[]).values_list(
        "name", "type__name", "aliases"
    ):
        for alias in aliases:
            held.setdefault(alias.casefold(), (name, type_name))
    same = 0
    retyped: list[dict[str, Any]] = []
    merged: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    for row in rows:
        found = types.get(row["name"].casefold(), set())
        if row["type"] in found:
            same += 1
        elif found:
            retyped.append({**row, "now": sorted(found)})
        elif row["name"].casefold() in held:
            merged.append({**row, "now": list(held[row["name"].casefold()])})
        else:
            missing.append(row)
    return {
        "workspace": workspace.slug,
        "labelled": len(rows),
        "same_name_and_type": same,
        "other_type": retyped,
        "merged_into": merged,
        "missing": missing,
    }


def mentions_inside_words(workspace: Any) -> dict[str, int]:
    """Located mentions whose span sits inside a longer word ("str" in "string"): evidence
    that points at the wrong place."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*), count(*) FILTER (
                WHERE substr(c.text, m.char_start - c.char_start, 1) ~ '\\w'
                   OR substr(c.text, m.char_end - c.char_start + 1, 1) ~ '\\w')
            FROM knowledge_mention m JOIN ingest_chunk c ON c.id = m.chunk_id
            WHERE m.workspace_id = %s AND m.char_start IS NOT NULL
              AND m.char_start > c.char_start
              AND left(m.surface_form, 1) ~ '\\w' AND right(m.surface_form, 1) ~ '\\w'
            """,
            [workspace.pk],
        )
        located, inside = cursor.fetchone()
    return {"located": located, "inside_a_word": inside}


def descriptions_mid_sentence(workspace: Any) -> dict[str, int]:
    """Mention descriptions (the statement an extractor wrote about a name) that end on a
    lowercase letter or a comma: most were cut mid-sentence at a line break."""
    described = Mention.objects.filter(workspace=workspace).exclude(description="")
    return {
        "described": described.count(),
        "ending_mid_sentence": described.filter(description__regex=r"[a-z,]\s*$").count(),
    }


def names_split_by_type(workspace: Any) -> dict[str, int]:
    """Names held by active entities of several types, and those where one is the fallback
    type (see `homonyms`)."""
    rows = Entity.objects.filter(workspace=workspace, state="active").values_list(
        "canonical_name", "type__name"
    )
    types: dict[str, set[str]] = {}
    for name, type_name in rows.iterator():
        types.setdefault(name, set()).add(type_name)
    split = [found for found in types.values() if len(found) > 1]
    return {"names": len(split), "with_fallback": sum(FALLBACK_TYPE in t for t in split)}


def homonyms(slug: str | None, size: int, seed: int) -> dict[str, Any]:
    """Names a crawl holds as several active entities of different types, and a seeded
    sample of those where one is the fallback type ("concept", the offline extractor's
    answer when it cannot tell), each with the entity of another type holding most mentions
    and a few sentences of evidence for both, `same` left null for a person to label: is
    it one thing typed two ways, or two things?"""
    workspace = _crawl_workspace(slug)
    active = Entity.objects.filter(workspace=workspace, state="active")
    by_name: dict[str, list[tuple[int, str, int, str]]] = {}
    rows = active.values_list("canonical_name", "pk", "type__name", "mention_count", "name")
    for canonical, *entity in rows:
        by_name.setdefault(canonical, []).append(tuple(entity))  # type: ignore[arg-type]
    split = {name: rows for name, rows in by_name.items() if len(rows) > 1}
    fallback = sorted(
        name for name, rows in split.items() if any(r[1] == FALLBACK_TYPE for r in rows)
    )
    chosen = random.Random(seed).sample(fallback, min(size, len(fallback)))
    pairs = []
    for name in sorted(chosen):
        concept = next(r for r in split[name] if r[1] == FALLBACK_TYPE)
        other = max((r for r in split[name] if r[1] != FALLBACK_TYPE), key=lambda r: (r[2], -r[0]))
        pairs.append(
            {
                "name": name,
                "concept": _side(concept),
                "other": {"type": other[1], **_side(other)},
                "same": None,
            }
        )
    return {
        "workspace": workspace.slug,
        "names_split_by_type": len(split),
        "of_which_one_is_fallback": len(fallback),
        "pairs": pairs,
    }


def _side(row: tuple[int, str, int, str]) -> dict[str, Any]:
    return {"name": row[3], "mentions": row[2], "contexts": _contexts(row[0])}


def _contexts(entity_id: int, limit: int = 2, width: int = 90) -> list[str]:
    """A few mentions of an entity with the text around them, one line each."""
    found = []
    mentions = Mention.objects.filter(entity_id=entity_id, char_start__isnull=False).order_by("pk")
    rows = mentions.values_list("char_start", "char_end", "chunk__char_start", "chunk__text")
    for doc_start, doc_end, offset, text in rows[:limit]:
        # Mentions count in the document, the chunk's text from its own start.
        start, end = int(doc_start or 0) - offset, int(doc_end or 0) - offset
        before, after = text[max(0, start - width) : start], text[end : end + width]
        found.append(" ".join(f"{before}[[{text[start:end]}]]{after}".split()))
    return found


def score_homonyms(path: Path) -> dict[str, Any]:
    """The labelled sample's share of pairs that are one thing typed two ways, and how the
    rule consolidation joins them by (`same_spelling`, case included) does on it: precision
    (of the pairs it joins, the share that are one thing) and recall (of the pairs that are
    one thing, the share it joins)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    labelled = [r for r in rows if r.get("same") is not None]
    same = [r for r in labelled if r["same"]]
    joined = [r for r in labelled if same_spelling(r["concept"]["name"], r["other"]["name"])]
    right = [r for r in joined if r["same"]]
    return {
        "sample": len(rows),
        "labelled": len(labelled),
        "same_thing": len(same),
        "same_share": round(len(same) / max(len(labelled), 1), 3),
        "joined_by_spelling": len(joined),
        "join_precision": round(len(right) / max(len(joined), 1), 3),
        "join_recall": round(len(right) / max(len(same), 1), 3),
        "joined_wrongly": [r["name"] for r in joined if not r["same"]],
    }


def review_queue(slug: str | None, sample: int, seed: int) -> dict[str, Any]:
    """A crawl's open review pairs scored again by the current name rules: the pairs of one
    type the spelling tier queued that it would no longer queue, and the pairs the name
    embedding queued that are two dotted code names a path tells apart (`code_paths_differ`),
    each with a seeded sample to read."""
    workspace = _crawl_workspace(slug)
    pairs = MergeSuggestion.objects.filter(workspace=workspace, status="open").select_related(
        "entity_a__type", "entity_b__type"
    )
    counted = dict.fromkeys(
        ("open", "spelling_same_type", "spelling_no_longer_queued", "embedding",
         "embedding_no_longer_queued"), 0,
    )  # fmt: skip
    dropped: dict[str, list[dict[str, str]]] = {"spelling": [], "embedding": []}
    for pair in pairs.iterator():
        counted["open"] += 1
        a, b, first = pair.entity_a, pair.entity_b, (pair.reasons or [""])[0]
        if first.startswith(EMBEDDING_REASON):
            counted["embedding"] += 1
            why = code_paths_differ(a.name, b.name)
            if why is not None:
                counted["embedding_no_longer_queued"] += 1
                dropped["embedding"].append({"a": a.name, "b": b.name, "why": why})
            continue
        if (
            first.startswith(TYPES_REASON)
            or not first.startswith("token")
            or a.type_id != b.type_id
        ):
            continue
        counted["spelling_same_type"] += 1
        kind = a.type.name
        now = name_similarity(a.name, b.name, suffixes=suffixes(kind), entity_type=kind)
        if now.score < thresholds(kind).review:
            counted["spelling_no_longer_queued"] += 1
            dropped["spelling"].append({"a": a.name, "b": b.name, "why": now.reasons[-1]})
    pick = random.Random(seed)
    samples = {k: pick.sample(v, min(sample, len(v))) for k, v in dropped.items()}
    return {"workspace": workspace.slug, **counted, "samples": samples}


def consolidation_report(slug: str | None, sample: int, seed: int) -> dict[str, Any]:
    """What consolidation made of a crawl: its automatic merges by their first reason, each
    reason with a seeded sample of (survivor, merged) names to read; the open review pairs by
    their first reason; and the active entities whose description begins with a version or
    availability note, or still holds Markdown marks ("**", a backtick)."""
    workspace = _crawl_workspace(slug)
    type_names = dict(EntityType.objects.filter(workspace=workspace).values_list("pk", "name"))
    merges: dict[str, list[dict[str, Any]]] = {}
    events = CurationEvent.objects.filter(workspace=workspace, action="auto_merge")
    for payload in events.order_by("pk").values_list("payload", flat=True).iterator():
        reason = (payload.get("reasons") or [""])[0]
        merges.setdefault(_reason_kind(reason), []).append({
            "reason": reason,
            "type": type_names.get(payload["survivor"]["type_id"], ""),
            "survivor": payload["survivor"]["name"],
            "merged": ", ".join(m["name"] for m in payload.get("merged", [])),
            "same": None,
        })  # fmt: skip
    pick = random.Random(seed)
    queued: dict[str, int] = {}
    open_pairs = MergeSuggestion.objects.filter(workspace=workspace, status="open")
    for reasons in open_pairs.values_list("reasons", flat=True).iterator():
        kind = _reason_kind((reasons or [""])[0])
        queued[kind] = queued.get(kind, 0) + 1
    described = Entity.objects.filter(workspace=workspace, state="active").exclude(description="")
    return {
        "workspace": workspace.slug,
        "automatic_merges": {k: len(v) for k, v in sorted(merges.items())},
        "open_review_pairs": dict(sorted(queued.items())),
        "descriptions": {
            "described": described.count(),
            "led_by_a_note": sum(
                1
                for text in described.values_list("description", flat=True).iterator()
                if NOTE_FRAGMENT.match(text)
            ),
            "with_marks": described.filter(description__regex=r"\*\*|`").count(),
        },
        "samples": {k: pick.sample(v, min(sample, len(v))) for k, v in sorted(merges.items())},
    }


def score_merges(path: Path) -> dict[str, Any]:
    """A labelled sample of automatic merges (`consolidation --out`, `same` filled in by a
    person): per reason, the share that joined one thing, and how many of the merges the
    current name rules alone would still make (`name_similarity` at the type's automatic
    merge threshold; the rules that look at the workspace, an acronym's other readings or a
    shorter form's other qualified names, are not replayed)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    found: dict[str, dict[str, Any]] = {}
    for row in (r for r in rows if r.get("same") is not None):
        kind = found.setdefault(
            _reason_kind(row["reason"]), {"labelled": 0, "same": 0, "still_merged": 0,
                                          "wrong_still_merged": []}
        )  # fmt: skip
        now = name_similarity(
            row["survivor"], row["merged"], suffixes=suffixes(row["type"]), entity_type=row["type"]
        )
        still = now.score >= thresholds(row["type"]).auto_merge
        kind["labelled"] += 1
        kind["same"] += int(row["same"])
        kind["still_merged"] += int(still)
        if still and not row["same"]:
            kind["wrong_still_merged"].append(f"{row['survivor']} / {row['merged']}")
    for kind in found.values():
        kind["precision"] = round(kind["same"] / kind["labelled"], 3)
    return {"sample": len(rows), "by_reason": found}


def _reason_kind(reason: str) -> str:
    """A reason without its figures and names: "token-set 0.92", "embedding 0.87" and
    "short form 'X' of 'Y'" are of three kinds."""
    return re.split(r"\s*['(:\d]", reason, maxsplit=1)[0] or "(none)"


def _crawl_workspace(slug: str | None) -> Any:
    crawls = Workspace.objects.filter(slug__startswith="docs-")
    workspace = crawls.get(slug=slug) if slug else crawls.order_by("-created_at").first()
    if workspace is None:
        raise SystemExit("no crawl in this database: run `crawl` first")
    return workspace


def _consolidation_command(args: argparse.Namespace) -> dict[str, Any]:
    if args.score:
        return score_merges(args.score)
    found = consolidation_report(args.workspace, args.sample, args.seed)
    if args.out:
        rows = [row for sample in found["samples"].values() for row in sample]
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        found["samples"] = {k: len(v) for k, v in found["samples"].items()}
    return found


def _homonyms_command(args: argparse.Namespace) -> dict[str, Any]:
    if args.score:
        return score_homonyms(args.score)
    found = homonyms(args.workspace, args.sample, args.seed)
    if args.out:
        args.out.write_text(
            "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in found["pairs"])
        )
    return {key: value for key, value in found.items() if key != "pairs" or not args.out}


def graph_digest(workspace: Any) -> str:
    """A hash of what the graph says (active entities with their type and evidence count,
    active relations with their ends and type): two runs over the same pages that agree on
    it built the same graph, so a faster run lost nothing."""
    entities = sorted(
        Entity.objects.filter(workspace=workspace, state="active").values_list(
            "name", "type__name", "mention_count"
        )
    )
    relations = sorted(
        Relation.objects.filter(workspace=workspace, state="active").values_list(
            "source__name", "source__type__name", "target__name", "target__type__name", "type__name"
        )
    )
    text = json.dumps([entities, relations], ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def speed(args: argparse.Namespace) -> dict[str, Any]:
    """End-to-end chunks per second of a crawl (parse, chunk, embed, extract, consolidate,
    in this process as one worker would), and `model.encode` alone on the same chunk texts
    right after, the way bench/ingest.py measures its reference. Models are loaded first:
    a worker has them loaded already."""
    embedder = get_embedder()
    embedder.encode(["warm up"])
    get_offline_extractor()
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    workspace, source, elapsed = crawl(
        args.root, args.max_pages, start=args.start, allow=tuple(args.allow)
    )
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(str(args.profile))
    texts = list(
        Chunk.objects.filter(workspace=workspace).order_by("pk").values_list("text", flat=True)
    )
    started = time.perf_counter()
    embedder.encode(texts)
    encode_only = time.perf_counter() - started
    result = figures(workspace, source, elapsed)
    return {
        "pages": result["pages"],
        "chunks": result["chunks"],
        "seconds": round(elapsed, 2),
        "chunks_per_s": round(len(texts) / elapsed, 2),
        "encode_alone_s": round(encode_only, 2),
        "encode_alone_chunks_per_s": round(len(texts) / encode_only, 2),
        "pipeline_vs_encode": round(encode_only / elapsed, 3),
        "entities": result["entities"],
        "relations": result["relations"],
        "typed_relation_share": result["typed_relation_share"],
        "windows": result["windows"],
        "chunks_headed_by_code_comments": result["chunks_headed_by_code_comments"],
        "mentions_inside_words": result["mentions_inside_words"],
        "names_split_by_type": result["names_split_by_type"],
        "descriptions_mid_sentence": result["descriptions_mid_sentence"],
        "boilerplate_chunks_extracted": result["boilerplate_chunks_extracted"],
        "quality": result["quality"],
        "graph_digest": graph_digest(workspace),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench/doc_quality.py")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("crawl")
    run.add_argument("--root", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    run.add_argument("--max-pages", type=int, default=600)
    run.add_argument("--sample", type=int, default=200)
    run.add_argument("--seed", type=int, default=15)
    run.add_argument("--out", type=Path, required=True)
    fast = commands.add_parser("speed")
    fast.add_argument("--root", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    fast.add_argument("--start", default="library/index.html")
    fast.add_argument("--allow", action="append", default=["/library/"])
    fast.add_argument("--max-pages", type=int, default=150)
    fast.add_argument("--profile", type=Path, help="write cProfile stats of the crawl here")
    scoring = commands.add_parser("score")
    scoring.add_argument("path", type=Path)
    again = commands.add_parser("recheck")
    again.add_argument("path", type=Path)
    again.add_argument("--workspace", help="a crawl's workspace slug (default: the latest)")
    chunked = commands.add_parser("headings")
    chunked.add_argument("--workspace", help="a crawl's workspace slug (default: the latest)")
    typed = commands.add_parser("homonyms")
    typed.add_argument("--workspace", help="a crawl's workspace slug (default: the latest)")
    typed.add_argument("--sample", type=int, default=60)
    typed.add_argument("--seed", type=int, default=20)
    typed.add_argument("--out", type=Path, help="write the sample here, one pair a line")
    typed.add_argument("--score", type=Path, help="score a labelled sample instead")
    queue = commands.add_parser("review")
    queue.add_argument("--workspace", help="a crawl's workspace slug (default: the latest)")
    queue.add_argument("--sample", type=int, default=40)
    queue.add_argument("--seed", type=int, default=5)
    merged = commands.add_parser("consolidation")
    merged.add_argument("--workspace", help="a crawl's workspace slug (default: the latest)")
    merged.add_argument("--sample", type=int, default=10)
    merged.add_argument("--seed", type=int, default=9)
    merged.add_argument("--out", type=Path, help="write the samples here, one merge a line")
    merged.add_argument("--score", type=Path, help="score a labelled sample instead")
    args = parser.parse_args()
    if args.command == "consolidation":
        print(json.dumps(_consolidation_command(args), indent=2, ensure_ascii=False))
        return
    if args.command == "review":
        found = review_queue(args.workspace, args.sample, args.seed)
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if args.command == "homonyms":
        print(json.dumps(_homonyms_command(args), indent=2, ensure_ascii=False))
        return
    if args.command == "headings":
        print(json.dumps(headings(args.workspace), indent=2, ensure_ascii=False))
        return
    if args.command == "score":
        print(json.dumps(score(args.path), indent=2))
        return
    if args.command == "recheck":
        print(json.dumps(recheck(args.path, args.workspace), indent=2, ensure_ascii=False))
        return
    if not (args.root / "index.html").is_file():
        raise SystemExit(f"{args.root}/index.html not found (apt-get install python3.11-doc)")
    call_command("migrate", verbosity=0)
    if args.command == "speed":
        print(json.dumps(speed(args), indent=2, ensure_ascii=False, default=str))
        return
    workspace, source, elapsed = crawl(args.root, args.max_pages)
    result = figures(workspace, source, elapsed)
    rows = sample(workspace, args.sample, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    report = json.dumps(result, indent=2, ensure_ascii=False, default=str)
    args.out.with_suffix(".figures.json").write_text(report + "\n")
    print(report)
