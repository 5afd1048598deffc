"""What extracting a source would cost before it runs: windows, cached windows, tokens
and money at the configured prices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ingest.models import Document, DocumentStatus, Source
from knowledge.actions.extraction.budget import source_budget
from knowledge.actions.extraction.runs import document_windows
from knowledge.actions.schema import (
    do_ensure_default_schema,
)
from knowledge.extraction.extractors import LlmExtractor, get_extractor
from knowledge.extraction.windows import Window
from knowledge.models import (
    ExtractionRun,
)
from knowledge.selectors.schema import get_schema_snapshot
from system.llm.client import estimate_tokens
from system.llm.pricing import llm_cost


@dataclass(slots=True)
class Estimate:
    extractor: str
    model: str
    windows: int
    cached_windows: int
    windows_to_extract: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    budget: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "extractor": self.extractor,
            "model": self.model,
            "windows": self.windows,
            "cached_windows": self.cached_windows,
            "windows_to_extract": self.windows_to_extract,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "cost": self.cost,
            "budget": self.budget,
        }


# Completion tokens are guessed as this share of the prompt's (extraction replies are
# shorter than their input; gleaning turns shorter still). Documented in operations.md.
COMPLETION_RATIO = 0.35


def estimate_source(*, source: Source, force: bool = False) -> Estimate:
    """Tokens and cost of extracting the source's documents now, without calling anything:
    cached windows cost nothing; each other window costs its prompt (with the schema) per
    turn, gleaning turns resending the conversation."""
    extractor = get_extractor()
    do_ensure_default_schema(workspace=source.workspace)
    schema = get_schema_snapshot(source.workspace)
    windows: dict[str, Window] = {}
    for document in Document.objects.filter(source=source).exclude(
        status__in=[DocumentStatus.FAILED, DocumentStatus.CANCELLED]
    ):
        for window in document_windows(document):
            windows.setdefault(window.hash, window)
    cached: set[str] = set()
    if not force:
        cached = set(
            ExtractionRun.objects.filter(
                workspace_id=source.workspace_id,
                window_hash__in=list(windows),
                prompt_version=extractor.prompt_version,
                model=extractor.model_id,
                schema_hash=schema.hash,
            ).values_list("window_hash", flat=True)
        )
    prompt = completion = 0
    if extractor.kind == "llm":
        assert isinstance(extractor, LlmExtractor)
        passes = extractor.gleaning_passes + 1
        for digest, window in windows.items():
            if digest in cached:
                continue
            base = extractor.prompt_tokens(window.text, schema=schema)
            reply = int(estimate_tokens(window.text) * COMPLETION_RATIO)
            for turn in range(passes):
                prompt += base + turn * (reply + estimate_tokens(extractor.prompts.glean))
                completion += reply if turn == 0 else reply // 3
    return Estimate(
        extractor=extractor.kind,
        model=extractor.model_id,
        windows=len(windows),
        cached_windows=len(cached),
        windows_to_extract=len(windows) - len(cached),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=float(llm_cost(prompt, completion)),
        budget=source_budget(source),
    )
