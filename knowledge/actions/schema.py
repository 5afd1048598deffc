"""Change the schema registry: seed it, add, accept, retire and rename types, set a
relation type's domain and range, and record the types extraction proposes.

Each change a person makes (accept, retire, rename, domain and range) is logged as a
`TypeChange` with what it replaced, and `do_undo_type_change` puts it back exactly.

Every function takes the workspace first and touches only its rows. Names are stored as
lowercase snake_case (`type_name`), so "Works For" and "works_for" are one type.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from knowledge.canonical import type_name
from knowledge.models import EntityType, RelationType, TypeOrigin, TypeStatus
from knowledge.models.schema import TypeChange, TypeChangeAction
from workspaces.errors import Conflict, InvalidInput, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from knowledge.models.schema import SchemaType

TypeKind = Literal["entity", "relation"]

# The types extraction falls back to; they cannot be retired or renamed.
FALLBACK_ENTITY_TYPE = "concept"
FALLBACK_RELATION_TYPE = "related_to"

DEFAULT_ENTITY_TYPES: list[tuple[str, str, list[str]]] = [
    ("person", "A real or fictional individual human.", ["Ada Lovelace", "Linus Torvalds"]),
    (
        "organization",
        "A company, institution, agency, team or other group of people acting together.",
        ["Google", "United Nations", "University of Oxford"],
    ),
    (
        "location",
        "A geographic place: country, city, region, address, building or natural feature.",
        ["Paris", "Mount Everest", "Silicon Valley"],
    ),
    ("product", "A commercial product, device or service.", ["iPhone", "Microsoft Excel"]),
    (
        "technology",
        "A technical method, protocol, programming language, framework or standard.",
        ["PostgreSQL", "TCP/IP", "transformer architecture"],
    ),
    (
        "concept",
        "An abstract idea, field, theory or topic; the type to use when no other fits.",
        ["machine learning", "inflation"],
    ),
    ("event", "Something that happened or will happen at a time.", ["World War II", "WWDC 2024"]),
    (
        "work",
        "A document or creative work: book, paper, article, film, law, report.",
        ["Attention Is All You Need", "The Origin of Species"],
    ),
]

DEFAULT_RELATION_TYPES: list[tuple[str, str, list[str]]] = [
    ("works_for", "A person is employed by or works for an organization.", []),
    ("part_of", "Something is a component, member or subdivision of another.", []),
    ("uses", "Something uses, runs on or depends on a technology, product or method.", []),
    ("located_in", "Something is situated in or based at a location.", []),
    ("created_by", "A work, product or organization was created or founded by someone.", []),
    ("owns", "An organization or person owns or acquired another thing.", []),
    ("participated_in", "A person or organization took part in an event.", []),
    ("about", "A work or event is about a topic or concept.", []),
    (
        "references",
        "A document or section links to or cites another subject, page or section.",
        [],
    ),
    (
        "related_to",
        "Any other clear relationship; the type to use when no other fits.",
        [],
    ),
]


def type_model(kind: TypeKind) -> type[SchemaType]:
    if kind == "entity":
        return EntityType
    if kind == "relation":
        return RelationType
    raise InvalidInput(f"Unknown type kind {kind!r}; use 'entity' or 'relation'.")


def fallback_type(kind: TypeKind) -> str:
    return FALLBACK_ENTITY_TYPE if kind == "entity" else FALLBACK_RELATION_TYPE


def do_ensure_default_schema(*, workspace: Workspace) -> None:
    """Seed the default types once per workspace (concurrent callers are harmless)."""
    seeds: tuple[tuple[type[SchemaType], list[tuple[str, str, list[str]]]], ...] = (
        (EntityType, DEFAULT_ENTITY_TYPES),
        (RelationType, DEFAULT_RELATION_TYPES),
    )
    for model, defaults in seeds:
        if model.objects.for_workspace(workspace).exists():
            continue
        model.objects.bulk_create(
            [
                model(
                    workspace=workspace,
                    name=name,
                    description=description,
                    examples=examples,
                    status=TypeStatus.ACTIVE,
                    origin=TypeOrigin.DEFAULT,
                )
                for name, description, examples in defaults
            ],
            ignore_conflicts=True,
        )


def _clean_name(value: str) -> str:
    name = type_name(value)
    if not name:
        raise InvalidInput("A type needs a name made of letters, digits or underscores.")
    return name


def _get(workspace: Workspace, kind: TypeKind, name: str) -> SchemaType:
    """The type, locked for the change (call inside a transaction)."""
    model = type_model(kind)
    found = (
        model.objects.for_workspace(workspace)
        .select_for_update()
        .filter(name=type_name(name))
        .first()
    )
    if found is None:
        raise NotFound(f"No {kind} type named {name!r} in this workspace.")
    return found


def do_add_type(
    *,
    workspace: Workspace,
    kind: TypeKind,
    name: str,
    description: str = "",
    examples: Iterable[str] = (),
    created_by: User | None = None,
) -> SchemaType:
    do_ensure_default_schema(workspace=workspace)
    model = type_model(kind)
    clean = _clean_name(name)
    existing = model.objects.for_workspace(workspace).filter(name=clean).first()
    if existing is not None:
        raise Conflict(
            f"The {kind} type {clean!r} exists already ({existing.status}); "
            + ("accept it instead." if existing.status != TypeStatus.ACTIVE else "")
        )
    try:
        with transaction.atomic():
            return model.objects.create(
                workspace=workspace,
                name=clean,
                description=description.strip()[:2000],
                examples=[e.strip()[:200] for e in examples if e.strip()][:20],
                status=TypeStatus.ACTIVE,
                origin=TypeOrigin.USER,
                created_by=created_by,
            )
    except IntegrityError as exc:
        raise Conflict(f"The {kind} type {clean!r} exists already.") from exc


def _log(
    workspace: Workspace,
    found: SchemaType,
    kind: TypeKind,
    action: str,
    *,
    before: dict[str, Any],
    actor: User | None,
    into: str = "",
    summary: str,
) -> TypeChange:
    return TypeChange.objects.create(
        workspace=workspace, kind=kind, action=action, type_name=found.name, into=into,
        before=before, actor=actor, summary=summary[:500],
    )  # fmt: skip


def do_accept_type(
    *, workspace: Workspace, kind: TypeKind, name: str, actor: User | None = None
) -> SchemaType:
    """Make a proposed (or retired) type active: extraction offers it from now on."""
    # Seeding commits on its own, so a refused change never takes the defaults back with it.
    do_ensure_default_schema(workspace=workspace)
    with transaction.atomic():
        found = _get(workspace, kind, name)
        before = {"status": found.status}
        found.status = TypeStatus.ACTIVE
        found.save(update_fields=["status", "updated_at"])
        _log(
            workspace, found, kind, TypeChangeAction.ACCEPT, before=before, actor=actor,
            summary=f"Accepted the {kind} type {found.name} (was {before['status']})",
        )  # fmt: skip
    return found


def do_retire_type(
    *, workspace: Workspace, kind: TypeKind, name: str, actor: User | None = None
) -> SchemaType:
    """Stop offering a type to extraction; what was typed with it keeps its type."""
    do_ensure_default_schema(workspace=workspace)
    with transaction.atomic():
        found = _get(workspace, kind, name)
        if found.name == fallback_type(kind):
            raise Conflict(f"{found.name!r} is the fallback {kind} type and cannot be retired.")
        before = {"status": found.status}
        found.status = TypeStatus.RETIRED
        found.save(update_fields=["status", "updated_at"])
        _log(
            workspace, found, kind, TypeChangeAction.RETIRE, before=before, actor=actor,
            summary=f"Retired the {kind} type {found.name} (was {before['status']})",
        )  # fmt: skip
    return found


def do_rename_type(
    *, workspace: Workspace, kind: TypeKind, name: str, new_name: str, actor: User | None = None
) -> SchemaType:
    do_ensure_default_schema(workspace=workspace)
    clean = _clean_name(new_name)
    with transaction.atomic():
        found = _get(workspace, kind, name)
        if found.name == fallback_type(kind):
            raise Conflict(f"{found.name!r} is the fallback {kind} type and cannot be renamed.")
        if clean == found.name:
            return found
        if type_model(kind).objects.for_workspace(workspace).filter(name=clean).exists():
            raise Conflict(f"A {kind} type named {clean!r} exists already.")
        _log(
            workspace, found, kind, TypeChangeAction.RENAME, before={}, into=clean, actor=actor,
            summary=f"Renamed the {kind} type {found.name} to {clean}",
        )  # fmt: skip
        found.name = clean
        found.save(update_fields=["name", "updated_at"])
    return found


def do_record_proposed_types(
    *, workspace: Workspace, kind: TypeKind, names: Iterable[str], origin: str = TypeOrigin.MODEL
) -> dict[str, SchemaType]:
    """Types extraction asked for that the registry lacks: created as proposed (active with
    EXTRACTION_AUTO_ACCEPT_TYPES), counted when asked for again. Returns them by name."""
    model = type_model(kind)
    clean = sorted({n for n in (type_name(name) for name in names) if n})
    if not clean:
        return {}
    status = TypeStatus.ACTIVE if settings.EXTRACTION_AUTO_ACCEPT_TYPES else TypeStatus.PROPOSED
    model.objects.bulk_create(
        [
            model(
                workspace=workspace,
                name=name,
                status=status,
                origin=origin,
                description=f"Proposed during extraction ({origin}).",
            )
            for name in clean
        ],
        ignore_conflicts=True,
    )
    rows = model.objects.for_workspace(workspace).filter(name__in=clean)
    rows.exclude(status=TypeStatus.ACTIVE).update(proposed_count=F("proposed_count") + 1)
    return {row.name: row for row in rows}


def do_set_relation_domain(
    *,
    workspace: Workspace,
    name: str,
    domain: Iterable[str],
    range: Iterable[str],
    actor: User | None = None,
) -> RelationType:
    """Set the entity types a relation type may start at (`domain`) and end at (`range`);
    an empty list means any. Every name must be an entity type of this workspace that is
    not retired. The extraction prompt shows them from the next window on (they are part
    of the schema hash)."""
    do_ensure_default_schema(workspace=workspace)
    with transaction.atomic():
        found = _get(workspace, "relation", name)
        assert isinstance(found, RelationType)
        before = _signature(found)
        found.domain.set(_entity_types(workspace, domain))
        found.range.set(_entity_types(workspace, range))
        found.save(update_fields=["updated_at"])
        after = _signature(found)
        _log(
            workspace, found, "relation", TypeChangeAction.DOMAIN, before=before, actor=actor,
            summary=f"Set {found.name}: {' | '.join(after['domain']) or 'any'} → "
            f"{' | '.join(after['range']) or 'any'}",
        )  # fmt: skip
    return found


def _signature(found: RelationType) -> dict[str, list[str]]:
    return {
        "domain": sorted(t.name for t in found.domain.all()),
        "range": sorted(t.name for t in found.range.all()),
    }


def do_undo_type_change(
    *, workspace: Workspace, change_id: int, actor: User | None = None
) -> TypeChange:
    """Put a type back as it was before an accept, retire, rename or domain change (a
    merge is undone by `curation.types.do_unmerge_types`). Refused when undone already, or
    when a later change to the same type still stands (undo that one first)."""
    do_ensure_default_schema(workspace=workspace)
    with transaction.atomic():
        change = locked_change(workspace, change_id)
        if change.action == TypeChangeAction.MERGE:
            raise InvalidInput("A merge is undone with do_unmerge_types.")
        kind: TypeKind = "relation" if change.kind == "relation" else "entity"
        current = change.into if change.action == TypeChangeAction.RENAME else change.type_name
        found = _get(workspace, kind, current)
        if change.action == TypeChangeAction.RENAME:
            taken = type_model(kind).objects.for_workspace(workspace).filter(name=change.type_name)
            if taken.exists():
                raise Conflict(f"A {kind} type named {change.type_name!r} exists again.")
            found.name = change.type_name
            found.save(update_fields=["name", "updated_at"])
        elif change.action == TypeChangeAction.DOMAIN:
            assert isinstance(found, RelationType)
            found.domain.set(_entity_types(workspace, change.before["domain"]))
            found.range.set(_entity_types(workspace, change.before["range"]))
        else:
            found.status = change.before["status"]
            found.save(update_fields=["status", "updated_at"])
        mark_undone(change, actor)
    return change


def locked_change(workspace: Workspace, change_id: int) -> TypeChange:
    """The change, row-locked; refused when undone already or followed by a standing
    change of the same type."""
    change = (
        TypeChange.objects.for_workspace(workspace).select_for_update().filter(pk=change_id).first()
    )
    if change is None:
        raise NotFound(f"No schema change {change_id} in this workspace.")
    if change.undone_at is not None:
        raise Conflict(f"Schema change {change_id} was undone already.")
    names = {change.type_name, change.into} - {""}
    later = (
        TypeChange.objects.for_workspace(workspace)
        .filter(kind=change.kind, pk__gt=change.pk, undone_at__isnull=True)
        .filter(Q(type_name__in=names) | Q(into__in=names))
        .order_by("-pk")
        .first()
    )
    if later is not None:
        raise Conflict(f"{later.summary} came later: undo it first.")
    return change


def mark_undone(change: TypeChange, actor: User | None) -> None:
    change.undone_at, change.undone_by = timezone.now(), actor
    change.save(update_fields=["undone_at", "undone_by"])


def _entity_types(workspace: Workspace, names: Iterable[str]) -> list[EntityType]:
    wanted = sorted({type_name(n) for n in names if type_name(n)})
    found = list(
        EntityType.objects.for_workspace(workspace)
        .filter(name__in=wanted)
        .exclude(status=TypeStatus.RETIRED)
    )
    missing = sorted(set(wanted) - {t.name for t in found})
    if missing:
        raise InvalidInput(f"No usable entity type {missing[0]!r} in this workspace.")
    return found
