"""What a tool is: a name, a description and an argument model for the agent; the role it
needs; and a function from the agent's access and its checked arguments to an answer.

The argument model is the one source of the JSON schema a host shows the model and of the
checking of what the model sends back, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from agents.access import Access
from agents.results import ToolAnswer
from workspaces.models import Role


class Arguments(BaseModel):
    """Base of every tool's arguments: unknown names are refused, not ignored, so a
    misspelt option is an error the model sees instead of a silently different query."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    arguments: type[Arguments]
    run: Callable[[Access, Any], ToolAnswer]
    role: Role = Role.VIEWER
    open_world: bool = False  # reaches outside the workspace (the web)
    available: Callable[[], bool] = lambda: True  # e.g. only with an LLM configured

    @property
    def read_only(self) -> bool:
        return self.role == Role.VIEWER

    def input_schema(self) -> dict[str, Any]:
        return _without_titles(self.arguments.model_json_schema())


def _without_titles(schema: Any) -> Any:
    """Pydantic's generated `title`s repeat the property names; the descriptions say more."""
    if isinstance(schema, dict):
        return {
            key: _without_titles(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    return schema


def paged(items: list[Any], *, count: int, limit: int, offset: int) -> dict[str, Any]:
    """A page of a list, with where the next one starts (null at the end)."""
    following = offset + len(items)
    return {
        "items": items,
        "count": count,
        "limit": limit,
        "offset": offset,
        "next_offset": following if following < count else None,
    }
