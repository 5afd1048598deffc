"""The keys entities are matched on, per type: the canonical key (what an entity is unique
by within its type), the blocking keys (which candidates a name is compared with) and the
thresholds that decide a match. Pure functions of a name, its type and the settings.
"""

from __future__ import annotations

from django.conf import settings

from knowledge.consolidation.names.blocking import blocking_keys
from knowledge.consolidation.names.normalise import canonical_key, suffixes_for_type
from knowledge.consolidation.names.thresholds import Thresholds, thresholds_for


def suffixes(type_name: str) -> tuple[str, ...]:
    """Corporate suffixes are ignored for organisations only (elsewhere they mean
    something); CONSOLIDATION_CORPORATE_SUFFIXES replaces the built-in list."""
    configured = tuple(settings.CONSOLIDATION_CORPORATE_SUFFIXES)
    if type_name == "organization" and configured:
        return configured
    return suffixes_for_type(type_name)


def entity_key(name: str, type_name: str) -> str:
    """The canonical key entities of a type are matched on (and unique by)."""
    return canonical_key(name, suffixes=suffixes(type_name))[:300]


def entity_blocking_keys(name: str, type_name: str) -> list[str]:
    return [k[:80] for k in blocking_keys(name, suffixes=suffixes(type_name))]


def thresholds(type_name: str) -> Thresholds:
    """Per-type thresholds: CONSOLIDATION_TYPE_THRESHOLDS entries ("type:auto:review"),
    else CONSOLIDATION_AUTO_MERGE / CONSOLIDATION_REVIEW, else the tuned defaults."""
    for entry in settings.CONSOLIDATION_TYPE_THRESHOLDS:
        parts = entry.split(":")
        if len(parts) == 3 and parts[0] == type_name:
            return Thresholds(auto_merge=float(parts[1]), review=float(parts[2]))
    base = thresholds_for(type_name)
    return Thresholds(
        auto_merge=settings.CONSOLIDATION_AUTO_MERGE or base.auto_merge,
        review=settings.CONSOLIDATION_REVIEW or base.review,
    )
