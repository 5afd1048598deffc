"""`manage.py schema --workspace SLUG [list|add-type|add-relation|accept|retire|rename]`:
the schema registry from the command line.

    schema --workspace acme list [--json]
    schema --workspace acme add-type gene --description "A gene" --example BRCA1
    schema --workspace acme add-relation inhibits --description "..."
    schema --workspace acme accept gene            (a proposed type; --relation for those)
    schema --workspace acme retire product
    schema --workspace acme rename gene genetic_locus
    schema --workspace acme merge product technology    (retypes product's entities; --relation)
    schema --workspace acme undo 12                     (a logged change: merge, rename, …)
    schema --workspace acme domain works_for --domain person --range organization
                                                        (no --domain / --range: any)

Exit codes: 0 done, 1 refused (unknown type, name taken, fallback type), 2 usage.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.actions.curation.types import do_merge_types, do_undo_schema_change
from knowledge.actions.schema import (
    TypeKind,
    do_accept_type,
    do_add_type,
    do_ensure_default_schema,
    do_rename_type,
    do_retire_type,
    do_set_relation_domain,
)
from knowledge.canonical import type_name
from knowledge.models import EntityType, RelationType
from knowledge.models.schema import TypeChange
from knowledge.selectors.schema import (
    list_entity_types,
    list_relation_types,
    relation_signatures,
    violation_counts,
)
from workspaces.commands import workspace_for_command
from workspaces.errors import DomainError, InvalidInput
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "List and change the workspace's entity and relation types."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument(
            "action",
            nargs="?",
            default="list",
            choices=[
                "list",
                "add-type",
                "add-relation",
                "accept",
                "retire",
                "rename",
                "merge",
                "undo",
                "domain",
            ],
        )
        parser.add_argument("names", nargs="*", metavar="NAME")
        parser.add_argument("--description", default="")
        parser.add_argument("--example", action="append", default=[], dest="examples")
        parser.add_argument("--domain", action="append", default=[], metavar="ENTITY_TYPE")
        parser.add_argument("--range", action="append", default=[], metavar="ENTITY_TYPE")
        kind = parser.add_mutually_exclusive_group()
        kind.add_argument("--relation", action="store_true", help="a relation type")
        kind.add_argument("--entity", action="store_true", help="an entity type")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(
        self, *args: Any, workspace: str, action: str, names: list[str], **options: Any
    ) -> None:
        ws = workspace_for_command(workspace)
        do_ensure_default_schema(workspace=ws)
        if action == "list":
            self._list(ws, as_json=options["as_json"])
            return
        wanted = {"add-type": 1, "add-relation": 1, "accept": 1, "retire": 1, "rename": 2,
                  "merge": 2, "undo": 1, "domain": 1}[action]  # fmt: skip
        if len(names) != wanted:
            raise CommandError(f"{action} takes {wanted} name(s).", returncode=2)
        if action in {"merge", "undo", "domain"}:
            self._change(ws, action, names, options)
            return
        try:
            if action in {"add-type", "add-relation"}:
                row = do_add_type(
                    workspace=ws,
                    kind="entity" if action == "add-type" else "relation",
                    name=names[0],
                    description=options["description"],
                    examples=options["examples"],
                )
            else:
                kind = self._kind(ws, names[0], options)
                if action == "accept":
                    row = do_accept_type(workspace=ws, kind=kind, name=names[0])
                elif action == "retire":
                    row = do_retire_type(workspace=ws, kind=kind, name=names[0])
                else:
                    row = do_rename_type(workspace=ws, kind=kind, name=names[0], new_name=names[1])
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        self.stdout.write(f"{row.__class__.__name__} {row.name}: {row.status}")

    def _change(
        self, ws: Workspace, action: str, names: list[str], options: dict[str, Any]
    ) -> None:
        """merge, undo and domain: logged changes, each printed with its id."""
        try:
            if action == "merge":
                change = do_merge_types(
                    workspace=ws, kind=self._kind(ws, names[0], options),
                    source_name=names[0], into_name=names[1],
                )  # fmt: skip
            elif action == "undo":
                if not names[0].isdigit():
                    raise InvalidInput("undo takes the id of a schema change.")
                change = do_undo_schema_change(workspace=ws, change_id=int(names[0]))
            else:
                do_set_relation_domain(
                    workspace=ws, name=names[0], domain=options["domain"], range=options["range"]
                )
                change = TypeChange.objects.for_workspace(ws).order_by("-pk")[0]
        except InvalidInput as exc:
            raise CommandError(exc.message, returncode=2) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=1) from exc
        undone = " (undone)" if change.undone_at else ""
        self.stdout.write(f"change {change.pk}: {change.summary}{undone}")
        for row in change.conflicts[:50]:
            self.stdout.write(f"  left: {row['name']} ({row['reason']})")

    def _kind(self, ws: Workspace, name: str, options: dict[str, Any]) -> TypeKind:
        if options["relation"]:
            return "relation"
        if options["entity"]:
            return "entity"
        clean = type_name(name)
        in_entity = EntityType.objects.for_workspace(ws).filter(name=clean).exists()
        in_relation = RelationType.objects.for_workspace(ws).filter(name=clean).exists()
        if in_entity and in_relation:
            raise CommandError(
                f"{clean!r} is both an entity and a relation type: add --entity or --relation.",
                returncode=2,
            )
        return "relation" if in_relation else "entity"

    def _signature(self, ws: Workspace, row: Any) -> dict[str, Any]:
        if not hasattr(self, "_signatures"):
            self._signatures = (relation_signatures(ws), violation_counts(ws))
        domain, range_ = self._signatures[0].get(row.name, ((), ()))
        return {"domain": list(domain), "range": list(range_),
                "outside": self._signatures[1].get(row.pk, 0)}  # fmt: skip

    def _list(self, ws: Workspace, *, as_json: bool) -> None:
        groups: dict[str, list[Any]] = {
            "entity": list_entity_types(ws),
            "relation": list_relation_types(ws),
        }
        if as_json:
            self.stdout.write(
                json.dumps(
                    {
                        f"{kind}_types": [
                            {
                                "name": row.name,
                                "status": row.status,
                                "origin": row.origin,
                                "description": row.description,
                                "examples": row.examples,
                                "proposed_count": row.proposed_count,
                                **(self._signature(ws, row) if kind == "relation" else {}),
                            }
                            for row in rows
                        ]
                        for kind, rows in groups.items()
                    }
                )
            )
            return
        signatures, outside = relation_signatures(ws), violation_counts(ws)
        for kind, rows in groups.items():
            self.stdout.write(f"{kind} types:")
            for row in rows:
                used = getattr(row, "entity_count", None) or getattr(row, "relation_count", 0)
                asked = f", proposed {row.proposed_count}x" if row.proposed_count else ""
                self.stdout.write(
                    f"  {row.name:<24} {row.status:<9} {used or 0:>6} used{asked}  "
                    f"{row.description[:70]}"
                )
                if kind == "relation" and row.name in signatures:
                    domain, range_ = signatures[row.name]
                    self.stdout.write(
                        f"  {'':<24} {' | '.join(domain) or 'any'} → {' | '.join(range_) or 'any'}"
                        f", {outside.get(row.pk, 0)} outside"
                    )
