"""Reading /metrics' exposition text in tests."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def value(text: str, name: str, **labels: str) -> float | None:
    """The sample `name` with exactly these labels (a subset match), or None."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and labels.items() <= sample.labels.items():
                return sample.value
    return None
