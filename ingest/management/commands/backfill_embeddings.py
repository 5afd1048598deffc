"""`manage.py backfill_embeddings [--workspace SLUG]`: vectors for chunks that lack one from
the current EMBEDDING_MODEL (new model, model that was unavailable at ingest time).

Shows a progress bar; safe to interrupt and run again (each batch commits).
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from ingest.actions.embeddings import do_embed_chunks, do_ensure_vector_index
from ingest.embeddings import EmbeddingUnavailable, get_embedder
from ingest.models import Chunk
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "Compute missing or outdated chunk embeddings with the configured model."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--workspace", metavar="SLUG", help="only this workspace (default: all)"
        )
        parser.add_argument("--batch-size", type=int, default=256)

    def handle(self, *args: Any, workspace: str | None, batch_size: int, **options: Any) -> None:
        try:
            embedder = get_embedder()
        except EmbeddingUnavailable as exc:
            raise CommandError(f"The embedding model is unavailable: {exc}", returncode=1) from exc
        workspaces = Workspace.objects.order_by("slug")
        if workspace:
            workspaces = workspaces.filter(slug=workspace)
            if not workspaces.exists():
                raise CommandError(f"Workspace {workspace!r} not found.", returncode=2)
        index = do_ensure_vector_index(dimension=embedder.dimension)
        total = computed = 0
        for ws in workspaces:
            todo = Chunk.objects.for_workspace(ws).exclude(embedding_model=embedder.model_id)
            count = todo.count()
            if not count:
                continue
            total += count
            with tqdm(
                total=count, unit="chunk", desc=ws.slug, file=sys.stderr, disable=None
            ) as bar:
                computed += do_embed_chunks(
                    chunks=todo, workspace_id=ws.pk, batch_size=batch_size, on_progress=bar.update
                )
        self.stdout.write(
            f"{total} chunk(s) updated to {embedder.model_id} ({computed} computed, "
            f"{total - computed} copied from identical text); index {index}"
        )
