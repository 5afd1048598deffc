"""Entity reads behind the graph API, the explorer and the stats command: searches by name
(any word of a name or alias, by prefix, one typo forgiven; ranked), an entity's detail
with its evidence, orphans.

Each function takes the workspace first and never reads another workspace's rows. Lists
are QuerySets (the degree is a column PostgreSQL keeps, see Entity.degree), so a page costs
the same number of queries whatever its length.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.expressions import OrderBy, RawSQL
from rapidfuzz.distance import OSA

from ingest.models import Chunk, Document, Source
from knowledge.consolidation.names.normalise import canonical_key
from knowledge.models import (
    Alias,
    Entity,
    EntityState,
    EntityWord,
    Mention,
    Relation,
    WordTypoKey,
)
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace

NameMatch = Literal["words", "prefix", "contains"]
EntityOrder = Literal["relevance", "name", "-degree", "-mention_count", "-last_seen_at"]


# The newest evidence rows shown with an entity or a relation.
MAX_EVIDENCE = 100


# Characters of context either side of a mention, and the longest snippet shown.
SNIPPET_CONTEXT = 120
SNIPPET_MAX = 400


# How well a name matched the query (`search_rank`, lower is better): the whole name or an
# alias is the query; starts with it; every query word starts a word of the name or of an
# alias; some query word is one typo away from such a word (or, `contains`, anything else).
RANK_EXACT, RANK_PREFIX, RANK_WORDS, RANK_TYPO = 0, 1, 2, 3
# Query words looked at (the rest are ignored), and the shortest one a typo is forgiven in.
MAX_QUERY_WORDS = 8
TYPO_MIN_LENGTH = 4


def _prefix(field: str, key: str) -> Q:
    """`field` starts with `key`, written as a range the btree index can scan (PostgreSQL
    turns LIKE 'key%' into one only under the C collation; the embedded server's is
    C.UTF-8) plus the LIKE itself, which keeps the answer exact under any collation."""
    condition = Q(**{f"{field}__gte": key, f"{field}__startswith": key})
    upper = _after_prefix(key)
    return condition if upper is None else condition & Q(**{f"{field}__lt": upper})


def _after_prefix(key: str) -> str | None:
    """The smallest string above every string starting with `key` (None: no such bound)."""
    last = ord(key[-1]) + 1
    if last > 0x10FFFF:
        return None
    if 0xD800 <= last <= 0xDFFF:  # surrogates are not characters
        last = 0xE000
    return key[:-1] + chr(last)


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@dataclass(frozen=True, slots=True)
class QueryWord:
    """A word of the query as entity words are made (`knowledge_name_words`, migration
    0014), and the workspace's words one typo away from it."""

    word: str
    typos: tuple[str, ...] = ()


def query_words(workspace: Workspace, q: str) -> list[QueryWord]:
    """The query's words and, for those of 4+ characters, the workspace's words within one
    insertion, deletion, substitution or swap of them: one lookup of the query words'
    typo keys (SymSpell's deletion neighbourhood), the few candidates checked exactly."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT q.word, t.word
            FROM unnest(knowledge_name_words(%s)) AS q(word)
            LEFT JOIN {WordTypoKey._meta.db_table} AS t
              ON t.workspace_id = %s AND t.key = ANY(knowledge_typo_keys(q.word))
                 AND length(q.word) >= %s
            """,  # noqa: S608 (the table name is ours; every value is a parameter)
            [q, workspace.pk, TYPO_MIN_LENGTH],
        )
        rows = cursor.fetchall()
    found: dict[str, set[str]] = {}
    for word, candidate in rows:
        typos = found.setdefault(word, set())
        if candidate and candidate != word and OSA.distance(word, candidate) <= 1:
            typos.add(candidate)
    # Longest first: the rarest words narrow the search most.
    chosen = sorted(found, key=lambda w: (-len(w), w))[:MAX_QUERY_WORDS]
    return [QueryWord(word, tuple(sorted(found[word]))) for word in chosen]


def _starts(column: str, word: str) -> tuple[str, list[str]]:
    """SQL for `column` starting with `word`: a range an index scans, and the LIKE that
    keeps it exact under any collation."""
    upper = _after_prefix(word)
    sql = f"{column} >= %s AND {column} LIKE %s" + (f" AND {column} < %s" if upper else "")
    return sql, [word, _like_prefix(word), *([upper] if upper else [])]


def _word_sets(workspace: Workspace, words: list[QueryWord], *, typos: bool) -> RawSQL:
    """Entities having, for every query word, a word (of the name or an alias) that starts
    with it — or, with `typos`, is one typo away from it. The first (longest, so rarest)
    query word's entities come from the (workspace, word) index; each further word is then
    checked on those entities alone, through the (entity, word) index."""
    table = EntityWord._meta.db_table

    def matching(query: QueryWord, alias: str) -> tuple[str, list[Any]]:
        sql, params = _starts(f"{alias}.word", query.word)
        if typos and query.typos:
            return f"(({sql}) OR {alias}.word = ANY(%s))", [*params, list(query.typos)]
        return f"({sql})", params

    first, *rest = words
    # The first word's entities: index-only scans of its prefix range and of its typos
    # (an OR of the two would read the table's rows through a bitmap).
    condition, bounds = _starts("word", first.word)
    found = f"SELECT entity_id FROM {table} WHERE workspace_id = %s AND {condition}"  # noqa: S608 (ours)
    params: list[Any] = [workspace.pk, *bounds]
    if typos and first.typos:
        found += (
            f" UNION ALL SELECT entity_id FROM {table} WHERE workspace_id = %s AND word = ANY(%s)"  # noqa: S608 (ours)
        )
        params += [workspace.pk, list(first.typos)]
    sql = f"SELECT DISTINCT w.entity_id FROM ({found}) AS w WHERE true"  # noqa: S608 (ours)
    for query in rest:
        condition, more = matching(query, "o")
        sql += (
            f" AND EXISTS (SELECT 1 FROM {table} AS o"  # noqa: S608 (ours; values are parameters)
            f" WHERE o.entity_id = w.entity_id AND {condition})"
        )
        params += more
    return RawSQL(sql, params)  # noqa: S611 (every value is a parameter)


def _name_filter(workspace: Workspace, q: str, match: NameMatch, words: list[QueryWord]) -> Q:
    """Words (the default): the whole name or an alias starts like `q` (its canonical key:
    case, accents, punctuation, articles folded as consolidation does), or every word of
    `q` starts a word of the name or of an alias, one typo forgiven in words of 4+
    characters — index range scans of the (workspace, canonical_name), (workspace,
    canonical) and (workspace, word) indexes and one lookup of typo keys. Prefix: only the
    first. Contains: a case-insensitive substring of the name or an alias, which reads
    every name of the workspace (the embedded server has no pg_trgm for a trigram index)."""
    if match == "contains":
        aliases = Alias.objects.for_workspace(workspace)
        return Q(name__icontains=q) | Q(
            pk__in=aliases.filter(name__icontains=q).values("entity_id")
        )
    key = canonical_key(q)[:300]
    # One set of ids from a UNION of index scans; an OR across the tables would read every
    # entity of the workspace.
    parts: list[str] = []
    params: list[Any] = []
    if key:
        for table, column, id_column in (
            (Entity._meta.db_table, "canonical_name", "id"),
            (Alias._meta.db_table, "canonical", "entity_id"),
        ):
            condition, more = _starts(column, key)
            parts.append(f"SELECT {id_column} FROM {table} WHERE workspace_id = %s AND {condition}")  # noqa: S608 (ours)
            params += [workspace.pk, *more]
    if match == "words" and words:
        word_set = _word_sets(workspace, words, typos=True)
        parts.append(word_set.sql)
        params += list(word_set.params)
    if not parts:
        return Q(pk__in=[])
    union = " UNION ".join(f"({part})" for part in parts)
    # `= ANY(ARRAY(...))`, not `IN (...)`: the ids are computed first and each entity then
    # read by its primary key. With IN, the planner may hash the matches and read the
    # whole workspace to probe them (a thousand matches of a common word cost 100 ms).
    table = Entity._meta.db_table
    return Q(
        RawSQL(  # noqa: S611 (every value is a parameter)
            f'"{table}"."id" = ANY(ARRAY({union}))', params, output_field=BooleanField()
        )
    )


def _rank(workspace: Workspace, q: str, words: list[QueryWord]) -> Case:
    """`search_rank` of each match (see RANK_EXACT and the others)."""
    aliases = Alias.objects.for_workspace(workspace)
    key = canonical_key(q)[:300]
    whens = []
    if key:
        whens += [
            When(canonical_name=key, then=Value(RANK_EXACT)),
            When(pk__in=aliases.filter(canonical=key).values("entity_id"), then=Value(RANK_EXACT)),
            When(_prefix("canonical_name", key), then=Value(RANK_PREFIX)),
            When(
                pk__in=aliases.filter(_prefix("canonical", key)).values("entity_id"),
                then=Value(RANK_PREFIX),
            ),
        ]
    if words:
        whens.append(When(pk__in=_word_sets(workspace, words, typos=False), then=Value(RANK_WORDS)))
    return Case(*whens, default=Value(RANK_TYPO), output_field=IntegerField())


def search_entities(
    workspace: Workspace,
    *,
    q: str | None = None,
    match: NameMatch = "words",
    entity_type: str | None = None,
    source_id: int | None = None,
    seen_after: datetime | None = None,
    seen_before: datetime | None = None,
    min_degree: int | None = None,
    state: str = EntityState.ACTIVE,
    order: EntityOrder = "relevance",
) -> QuerySet[Entity]:
    """Entities of the workspace matching every filter given, with `degree`.

    With `q`, each has `search_rank` (RANK_EXACT .. RANK_TYPO) and the `relevance` order
    (the default) is: best rank first, then highest degree, then most mentions, then name;
    without `q` it is the name order. `seen_after` / `seen_before` select entities seen at
    some time in the window: last seen at or after `seen_after`, first seen at or before
    `seen_before`."""
    entities = (
        Entity.objects.for_workspace(workspace)
        .filter(state=state)
        .select_related("type")
        .defer("embedding", "blocking_keys", "properties", "summary", "summary_hash")
    )
    text = q.strip()[:300] if q is not None else ""
    if text:
        words = query_words(workspace, text) if match == "words" else []
        entities = entities.filter(_name_filter(workspace, text, match, words)).annotate(
            search_rank=_rank(workspace, text, words)
        )
    if entity_type:
        entities = entities.filter(type__name=entity_type)
    if source_id is not None:
        entities = entities.filter(source_ids__contains=[source_id])
    if seen_after is not None:
        entities = entities.filter(last_seen_at__gte=seen_after)
    if seen_before is not None:
        entities = entities.filter(first_seen_at__lte=seen_before)
    if min_degree is not None and min_degree > 0:
        entities = entities.filter(degree__gte=min_degree)
    if order == "relevance":
        if not text:
            return entities.order_by("name", "pk")
        return entities.order_by(
            F("search_rank").asc(), F("degree").desc(), F("mention_count").desc(), "name", "pk"
        )
    orderings: dict[str, str | OrderBy] = {
        "name": "name",
        "-degree": F("degree").desc(),
        "-mention_count": "-mention_count",
        "-last_seen_at": F("last_seen_at").desc(nulls_last=True),
    }
    return entities.order_by(orderings[order], "pk")


def get_entity_with_type(workspace: Workspace, entity_id: object) -> Entity:
    return get_object_for_workspace(
        Entity.objects.select_related("type").defer("embedding"),
        workspace,
        entity_id,
        label="Entity",
    )


def _document_ref(document: Document) -> dict[str, Any]:
    path = document.path
    return {
        "id": document.pk,
        "title": document.title or path,
        "path": path,
        "url": path if path.startswith(("http://", "https://")) else None,
        "source_id": document.source_id,
    }


def _snippet(chunk: Chunk, start: int | None, end: int | None, *, context: int) -> tuple[str, int]:
    """The chunk text around document offsets [start, end) (clipped to the chunk), and the
    document offset the snippet starts at; the chunk's head when the place is unknown. The
    context stops at whole words: "ython came with your…" read as a typo on the review
    page."""
    base, text = chunk.char_start, chunk.text
    if start is not None and end is not None:
        lo = max(start - context, base)
        hi = min(end + context, base + len(text), lo + SNIPPET_MAX)
        lo, hi = _whole_words(text, base, lo, hi, span=(start, end))
        if lo < hi:
            return text[lo - base : hi - base], lo
    return text[: min(SNIPPET_MAX, 300)], base


def _whole_words(
    text: str, base: int, lo: int, hi: int, *, span: tuple[int, int]
) -> tuple[int, int]:
    """[lo, hi) narrowed, outside `span`, to leave out a word cut at either end."""
    if lo > base and text[lo - base - 1].isalnum() and lo < span[0]:
        while lo < span[0] and text[lo - base].isalnum():
            lo += 1
    if hi < base + len(text) and text[hi - base].isalnum() and hi > span[1]:
        while hi > span[1] and text[hi - base - 1].isalnum():
            hi -= 1
    return lo, hi


_EVIDENCE_FIELDS = (
    "chunk__id",
    "chunk__text",
    "chunk__char_start",
    "chunk__document__id",
    "chunk__document__title",
    "chunk__document__path",
    "chunk__document__source_id",
)


def get_entity_detail(
    workspace: Workspace, entity_id: object, *, evidence_limit: int = 20
) -> dict[str, Any]:
    """Everything the explorer's entity panel shows, in a fixed number of queries: the
    entity, its sources, its relation counts by type and direction, and its newest
    mentions with the text around them."""
    entity = get_entity_with_type(workspace, entity_id)
    sources = (
        Source.objects.for_workspace(workspace)
        .filter(pk__in=entity.source_ids)
        .order_by("name", "pk")
        .values("id", "name", "kind")
    )
    # One grouped query; a self-loop counts once, as out (like degree).
    grouped = (
        Relation.objects.for_workspace(workspace)
        .filter(Q(source=entity) | Q(target=entity), state=EntityState.ACTIVE)
        .annotate(direction=Case(When(source=entity, then=Value("out")), default=Value("in")))
        .order_by()
        .values("type__name", "direction")
        .annotate(n=Count("pk"))
    )
    counts = sorted(
        (
            {"type": row["type__name"], "direction": row["direction"], "count": row["n"]}
            for row in grouped
        ),
        key=lambda row: (-row["count"], row["type"], row["direction"]),
    )
    mentions = (
        Mention.objects.for_workspace(workspace)
        .filter(entity=entity)
        .select_related("chunk__document")
        .only(
            "id",
            "surface_form",
            "char_start",
            "char_end",
            "description",
            "created_at",
            *_EVIDENCE_FIELDS,
        )
        .order_by("-created_at", "-pk")[: max(0, min(evidence_limit, MAX_EVIDENCE))]
    )
    evidence = []
    for mention in mentions:
        snippet, snippet_start = _snippet(
            mention.chunk, mention.char_start, mention.char_end, context=SNIPPET_CONTEXT
        )
        evidence.append(
            {
                "id": mention.pk,
                "chunk_id": mention.chunk_id,
                "document": _document_ref(mention.chunk.document),
                "surface_form": mention.surface_form,
                "char_start": mention.char_start,
                "char_end": mention.char_end,
                "snippet": snippet,
                "snippet_start": snippet_start,
                "description": mention.description,
                "created_at": mention.created_at,
            }
        )
    return {
        "id": entity.pk,
        "name": entity.name,
        "type": entity.type.name,
        "description": entity.description,
        "summary": entity.summary,
        "aliases": list(entity.aliases or []),
        "type_votes": dict(entity.type_votes or {}),
        "type_curated": entity.type_curated,
        "mention_count": entity.mention_count,
        "degree": entity.degree,
        "community": entity.community,
        "first_seen_at": entity.first_seen_at,
        "last_seen_at": entity.last_seen_at,
        "state": entity.state,
        "merged_into": entity.merged_into_id,
        "curated": entity.curated,
        "sources": list(sources),
        "relation_counts": counts,
        "evidence": evidence,
    }


def get_orphan_entities(workspace: Workspace) -> QuerySet[Entity]:
    """Active entities without a single mention (curated ones stay when their evidence
    goes; everything else normally goes with it)."""
    return (
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .filter(~Exists(Mention.objects.filter(entity=OuterRef("pk"))))
        .select_related("type")
        .order_by("name", "pk")
    )
