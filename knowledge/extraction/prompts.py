"""Versioned prompt templates, read from files under knowledge/prompts/<version>/.

The version recorded on every extraction run is the directory name plus a hash of the
files, so editing a template without renaming its directory still counts as a new prompt
(and re-runs extraction) instead of silently mixing outputs of two prompts under one key.
Templates are filled in one pass over the template: text from documents is inserted as-is
and never scanned for placeholders again.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_PLACEHOLDER = re.compile(r"\{(entity_types|relation_types|text|pairs|name|type|fragments)\}")
EXTRACTION_FILES = ("system.txt", "extract.txt", "glean.txt")
FILES = (*EXTRACTION_FILES, "same_entity.txt", "summarize.txt")


class PromptNotFound(Exception):
    pass


@dataclass(frozen=True, slots=True)
class PromptSet:
    version: str  # "<directory>@<hash12>"
    system: str
    extract: str
    glean: str
    same_entity: str
    summarize: str

    def render_extract(
        self,
        *,
        text: str,
        entity_types: tuple[tuple[str, str], ...],
        relation_types: tuple[tuple[str, str], ...],
    ) -> str:
        values = {
            "entity_types": _type_lines(entity_types),
            "relation_types": _type_lines(relation_types),
            "text": text,
        }
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.extract)


def render(template: str, **values: str) -> str:
    """Fill the named placeholders in one pass over the template: inserted text (names,
    descriptions, documents) is never scanned for placeholders again."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def describe_relation_type(
    description: str, domain: tuple[str, ...], range: tuple[str, ...]
) -> str:
    """A relation type's line in the prompt: its description, then the entity types it may
    join when its domain or range is set ("any" for the side left open)."""
    if not domain and not range:
        return description
    allowed = f"({' | '.join(domain) or 'any'} → {' | '.join(range) or 'any'})"
    return f"{description} {allowed}" if description else allowed


def _type_lines(types: tuple[tuple[str, str], ...]) -> str:
    return "\n".join(
        f"- {name}: {description}" if description else f"- {name}" for name, description in types
    )


@cache
def load_prompts(version: str) -> PromptSet:
    if not re.fullmatch(r"[\w.-]+", version or ""):
        raise PromptNotFound(f"Invalid prompt version {version!r}.")
    folder = PROMPTS_DIR / version
    try:
        texts = {name: (folder / name).read_text(encoding="utf-8") for name in FILES}
    except FileNotFoundError as exc:
        raise PromptNotFound(
            f"Prompt version {version!r} not found: {folder} must hold {', '.join(FILES)}."
        ) from exc
    # The version keys the extraction cache: only the extraction templates count.
    digest = hashlib.sha256(
        "\0".join(texts[name] for name in EXTRACTION_FILES).encode()
    ).hexdigest()
    return PromptSet(
        version=f"{version}@{digest[:12]}",
        system=texts["system.txt"].strip(),
        extract=texts["extract.txt"].strip(),
        glean=texts["glean.txt"].strip(),
        same_entity=texts["same_entity.txt"].strip(),
        summarize=texts["summarize.txt"].strip(),
    )
