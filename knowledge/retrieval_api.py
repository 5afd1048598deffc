"""`POST /workspaces/{slug}/search`: hybrid retrieval (knowledge/retrieval.py). Registered on
knowledge's router (knowledge/api.py)."""

from __future__ import annotations

from knowledge.api import router

__all__ = ["router"]
