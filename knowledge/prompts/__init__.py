"""Every text Graphloom sends an LLM, as versioned files under knowledge/prompts/<version>/,
and the one function that reads them (`load_prompt`).

The files: `system.txt`, `extract.txt`, `glean.txt` (extraction), `same_entity.txt`,
`summarize.txt` (the review of doubtful pairs and long descriptions), and the answer's
(`answer_*.txt`) and community summaries' (`community_summary_*.txt`) prompts, which
knowledge/answering/prompt.py fills.

EXTRACTION_PROMPT_VERSION picks the directory for extraction and review (`load_prompts`);
the version recorded on every extraction run is the directory name plus a hash of the
extraction files, so editing a template without renaming its directory still counts as a
new prompt (and re-runs extraction) instead of silently mixing outputs of two prompts under
one key. Templates are filled in one pass over the template: text from documents is
inserted as-is and never scanned for placeholders again.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parent
_PLACEHOLDER = re.compile(r"\{(entity_types|relation_types|text|pairs|name|type|fragments)\}")
# Any {name}, for the templates filled by `render` (a name given no value stays as it is).
_NAMED = re.compile(r"\{([a-z_]+)\}")
_NAME = re.compile(r"[\w.-]+")
EXTRACTION_FILES = ("system.txt", "extract.txt", "glean.txt")
FILES = (*EXTRACTION_FILES, "same_entity.txt", "summarize.txt")


class PromptNotFound(Exception):
    pass


def load_prompt(name: str, *, version: str) -> str:
    """The text of prompt `name` (a file name without `.txt`) of `version`, as the file
    holds it. Not cached: callers keep what they load (a test may point PROMPTS_DIR
    elsewhere)."""
    if not _NAME.fullmatch(version or ""):
        raise PromptNotFound(f"Invalid prompt version {version!r}.")
    if not _NAME.fullmatch(name or "") or name.startswith("."):
        raise PromptNotFound(f"Invalid prompt name {name!r}.")
    path = PROMPTS_DIR / version / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PromptNotFound(f"Prompt {name!r} of version {version!r} not found: {path}.") from exc


def render(template: str, **values: str) -> str:
    """Fill the named placeholders in one pass over the template: inserted text (names,
    descriptions, documents) is never scanned for placeholders again."""
    return _NAMED.sub(lambda m: values.get(m.group(1), m.group(0)), template)


@dataclass(frozen=True, slots=True)
class PromptSet:
    """The templates of extraction and review, of one version."""

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
    """The extraction and review templates of `version` (EXTRACTION_PROMPT_VERSION)."""
    try:
        texts = {name: load_prompt(name.removesuffix(".txt"), version=version) for name in FILES}
    except PromptNotFound as exc:
        if not _NAME.fullmatch(version or ""):
            raise
        raise PromptNotFound(
            f"Prompt version {version!r} not found: {PROMPTS_DIR / version} must hold "
            f"{', '.join(FILES)}."
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
