"""`manage.py backfill_embeddings [--workspace SLUG] [--batch-size N]`: vectors for the chunks
and the entity names that lack one from the current EMBEDDING_MODEL (a new model, or a model
that was unavailable when they were made: at ingest time, or when an entity was created or
renamed). A chunk's vector is of its indexed text (its document's title and heading path,
then its text: ingest/indexed_text.py); chunks whose vector was computed with another
recipe of that text (`Chunk.embedding_recipe`: those embedded before the title and heading
path were, for one) are embedded again, with the context the full-text index reads.

Here, not in ingest, because it covers the graph's entities too (ingest never imports the
knowledge app); chunks still go through ingest's own action. Shows a progress bar per
workspace and kind; safe to interrupt and run again (each batch commits). Exit codes: 0
done, 1 the embedding model is unavailable, 2 unknown workspace.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.actions.embeddings import do_embed_chunks, do_ensure_vector_index, needs_vector
from ingest.embeddings import EmbeddingUnavailable, get_embedder
from ingest.indexed_text import RECIPE
from ingest.management.progress import progress_bar
from ingest.models import Chunk
from knowledge.actions.embeddings import (
    do_backfill_entity_embeddings,
    do_ensure_entity_vector_index,
)
from knowledge.selectors.vectors import get_entities_needing_vectors
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "Compute missing or outdated chunk and entity-name embeddings with the configured model."

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
        entity_index = do_ensure_entity_vector_index(dimension=embedder.dimension)
        total = computed = entities = recipe = 0
        for ws in workspaces:
            todo = Chunk.objects.for_workspace(ws).filter(needs_vector(embedder.model_id))
            count = todo.count()
            if count:
                total += count
                recipe += todo.filter(embedding_model=embedder.model_id).count()
                with progress_bar(unit="chunk", total=count) as bar:
                    bar.set_description(ws.slug)
                    computed += do_embed_chunks(
                        chunks=todo,
                        workspace_id=ws.pk,
                        batch_size=batch_size,
                        on_progress=bar.update,
                    )
            names = get_entities_needing_vectors(ws, model_id=embedder.model_id)
            count = names.count()
            if count:
                with progress_bar(unit="entity", total=count) as bar:
                    bar.set_description(f"{ws.slug} entities")
                    entities += do_backfill_entity_embeddings(
                        entities=names, batch_size=batch_size, on_progress=bar.update
                    )
        self.stdout.write(
            f"{total} chunk(s) updated to {embedder.model_id} ({computed} computed, "
            f"{total - computed} copied from identical text); index {index}"
        )
        self.stdout.write(
            f"{entities} entity name(s) updated to {embedder.model_id}; index {entity_index}"
        )
        # After the two lines above, which scripts may read by position.
        self.stdout.write(
            f"{recipe} of the chunk(s) had a vector of this model from another indexed-text recipe "
            f"(now recipe {RECIPE}: title and heading path, then the text)"
        )
