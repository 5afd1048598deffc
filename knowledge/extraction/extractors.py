"""The two extractors behind one small interface: `extract(text, schema) -> WindowOutcome`.

`LlmExtractor` sends a window through the versioned prompt, then up to
EXTRACTION_GLEANING_PASSES follow-up turns asking for what was missed (stopping early when
the model says nothing is left or adds nothing new). `OfflineExtractor` (spaCy) needs no
LLM. Both are safe to call from worker threads: they never touch the database; the actions
record what they return.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from django.conf import settings

from knowledge.extraction.offline import get_offline_extractor
from knowledge.extraction.parsing import parse_extraction_output
from knowledge.extraction.schema import SchemaSnapshot
from knowledge.extraction.types import ExtractedEntity, ExtractedRelation, ParseResult
from knowledge.extraction.validation import validate_window
from knowledge.extraction.windows import NO_CONTEXT, WindowContext
from knowledge.prompts import PromptSet, load_prompts
from system.llm.availability import extraction_uses_llm
from system.llm.client import LlmClient, LlmError, estimate_tokens


@dataclass(frozen=True, slots=True)
class CallRecord:
    purpose: str  # "extract" or "glean"
    prompt_tokens: int
    completion_tokens: int
    usage_estimated: bool
    duration_ms: int
    attempts: int
    ok: bool = True
    error: str = ""


@dataclass(slots=True)
class WindowOutcome:
    result: ParseResult
    raw_output: list[str] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    passes: int = 1
    duration_ms: int = 0
    error: LlmError | None = None  # set when a call failed for good; nothing is cached then

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)


class Extractor(Protocol):
    kind: str  # "llm" or "offline"
    model_id: str
    prompt_version: str

    def extract(
        self, text: str, *, schema: SchemaSnapshot, context: WindowContext = NO_CONTEXT
    ) -> WindowOutcome: ...

    def max_tokens_for(self, text: str, *, schema: SchemaSnapshot) -> int:
        """An upper bound on the tokens extracting `text` may spend (0 for free ones)."""
        ...


def _limits(result: ParseResult) -> ParseResult:
    return validate_window(
        result,
        max_entities=settings.EXTRACTION_MAX_ENTITIES_PER_WINDOW,
        max_relations=settings.EXTRACTION_MAX_RELATIONS_PER_WINDOW,
    )


def _entity_key(entity: ExtractedEntity) -> tuple[str, str]:
    return entity.name.casefold(), entity.type


def _relation_key(relation: ExtractedRelation) -> tuple[str, str, str]:
    return relation.source.casefold(), relation.target.casefold(), relation.type


def _merge(into: ParseResult, more: ParseResult) -> int:
    """Add what `more` has that `into` lacks; returns how many records were new."""
    seen_entities = {_entity_key(e) for e in into.entities}
    seen_relations = {_relation_key(r) for r in into.relations}
    added = 0
    for entity in more.entities:
        if _entity_key(entity) not in seen_entities:
            seen_entities.add(_entity_key(entity))
            into.entities.append(entity)
            added += 1
    for relation in more.relations:
        if _relation_key(relation) not in seen_relations:
            seen_relations.add(_relation_key(relation))
            into.relations.append(relation)
            added += 1
    for key, value in more.counts.items():
        into.count(key, value)
    into.problems.extend(more.problems[: max(0, 20 - len(into.problems))])
    return added


class LlmExtractor:
    kind = "llm"

    def __init__(self, *, client: LlmClient, prompts: PromptSet, gleaning_passes: int) -> None:
        self.client = client
        self.prompts = prompts
        self.gleaning_passes = max(0, gleaning_passes)
        self.model_id = client.model
        self.prompt_version = prompts.version

    def _messages(self, text: str, schema: SchemaSnapshot) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.prompts.system},
            {
                "role": "user",
                "content": self.prompts.render_extract(
                    text=text,
                    entity_types=schema.entity_types,
                    relation_types=schema.relation_types,
                ),
            },
        ]

    def prompt_tokens(self, text: str, *, schema: SchemaSnapshot) -> int:
        """Estimated tokens of the first request for `text` (estimates and budgets)."""
        return sum(estimate_tokens(m["content"]) for m in self._messages(text, schema))

    def max_tokens_for(self, text: str, *, schema: SchemaSnapshot) -> int:
        prompt = self.prompt_tokens(text, schema=schema)
        completion = self.client.max_tokens
        glean = estimate_tokens(self.prompts.glean)
        total = 0
        for turn in range(self.gleaning_passes + 1):
            # Each follow-up resends the conversation so far.
            total += prompt + turn * (completion + glean) + completion
        # estimate_tokens counts 4 characters a token; real tokenizers vary, so leave room.
        return int(total * 1.25) + 16

    def extract(
        self, text: str, *, schema: SchemaSnapshot, context: WindowContext = NO_CONTEXT
    ) -> WindowOutcome:
        started = time.monotonic()
        messages = self._messages(text, schema)
        outcome = WindowOutcome(result=ParseResult())
        for turn in range(self.gleaning_passes + 1):
            purpose = "extract" if turn == 0 else "glean"
            try:
                reply = self.client.chat(messages)
            except LlmError as exc:
                outcome.calls.append(
                    CallRecord(purpose, 0, 0, False, 0, exc.attempts, ok=False, error=str(exc))
                )
                outcome.error = exc
                break
            outcome.calls.append(
                CallRecord(
                    purpose,
                    reply.usage.prompt_tokens,
                    reply.usage.completion_tokens,
                    reply.usage.estimated,
                    reply.duration_ms,
                    reply.attempts,
                )
            )
            outcome.raw_output.append(reply.content)
            outcome.passes = turn + 1
            parsed = parse_extraction_output(reply.content)
            if turn == 0:
                _merge(outcome.result, parsed)
            else:
                added = _merge(outcome.result, parsed)
                if parsed.done or added == 0:
                    outcome.result.count("gleaning_stopped_early")
                    break
                outcome.result.count("gleaning_added", added)
            if turn < self.gleaning_passes:
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply.content},
                    {"role": "user", "content": self.prompts.glean},
                ]
        outcome.result = _limits(outcome.result)
        outcome.result.done = True
        outcome.duration_ms = int((time.monotonic() - started) * 1000)
        return outcome


class OfflineExtractorAdapter:
    """The spaCy extractor behind the Extractor interface (free, so no budget)."""

    kind = "offline"

    def __init__(self) -> None:
        self._inner = get_offline_extractor()
        self.model_id = self._inner.model_id
        self.prompt_version = self._inner.prompt_version
        # spaCy pipelines are not documented as thread-safe; callers run windows in turn.
        self._lock = threading.Lock()

    def max_tokens_for(self, text: str, *, schema: SchemaSnapshot) -> int:
        return 0

    def extract(
        self, text: str, *, schema: SchemaSnapshot, context: WindowContext = NO_CONTEXT
    ) -> WindowOutcome:
        started = time.monotonic()
        with self._lock:
            result = self._inner.extract(
                text, entity_types=schema.entity_type_names, context=context
            )
        # A verb's lemma is the relation type (spec); outside the registry it is recorded
        # as a proposed type, like the model's NEW: types.
        known = schema.relation_type_names
        result.relations = [
            r if r.type in known else replace(r, proposed_type=True) for r in result.relations
        ]
        outcome = WindowOutcome(result=_limits(result))
        outcome.duration_ms = int((time.monotonic() - started) * 1000)
        return outcome


_lock = threading.Lock()
_cached: dict[tuple[object, ...], Extractor] = {}


def get_extractor() -> Extractor:
    """The configured extractor, built once per process and configuration: the LLM one when
    LLM_BASE_URL and LLM_MODEL are set (and EXTRACTION_OFFLINE is off), else offline."""
    key: tuple[object, ...] = (
        extraction_uses_llm(),
        settings.LLM_BASE_URL,
        settings.LLM_MODEL,
        settings.LLM_API_KEY,
        settings.LLM_TIMEOUT,
        settings.LLM_TEMPERATURE,
        settings.LLM_MAX_TOKENS,
        settings.LLM_MAX_RETRIES,
        settings.LLM_RETRY_BASE_DELAY,
        settings.EXTRACTION_PROMPT_VERSION,
        settings.EXTRACTION_GLEANING_PASSES,
    )
    with _lock:
        if key not in _cached:
            extractor: Extractor
            if extraction_uses_llm():
                extractor = LlmExtractor(
                    client=LlmClient.from_settings(),
                    prompts=load_prompts(settings.EXTRACTION_PROMPT_VERSION),
                    gleaning_passes=settings.EXTRACTION_GLEANING_PASSES,
                )
            else:
                extractor = OfflineExtractorAdapter()
            _close(_cached.values())
            _cached.clear()
            _cached[key] = extractor
        return _cached[key]


def _close(extractors: Iterable[Extractor]) -> None:
    """A replaced LLM extractor's connection pool is closed, not leaked."""
    for extractor in extractors:
        if isinstance(extractor, LlmExtractor):
            extractor.client.close()


def reset_extractor() -> None:
    with _lock:
        _close(_cached.values())
        _cached.clear()
