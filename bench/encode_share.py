"""One process's share of the model-alone timing in `bench/ingest.py --data-parallel`: its
own model on `threads` torch threads, loaded before the clock starts, encoding its share of
the texts once every process is ready. A module of its own, light to import: the processes
are spawned and import it again, before Django is set up."""

from __future__ import annotations

import time
from typing import Any


def encode_share(texts: list[str], threads: int, ready: Any, go: Any, seconds: Any) -> None:
    """Put this process's wall seconds for encoding `texts` on `seconds`."""
    import django

    django.setup()  # the parent's environment (settings module, database name) is inherited
    import torch

    from ingest.embeddings import get_embedder

    torch.set_num_threads(threads)
    embedder = get_embedder()
    embedder.encode(texts[:4])  # load and warm up outside the clock
    ready.put(True)
    go.wait()
    started = time.perf_counter()
    embedder.encode(texts)
    seconds.put(time.perf_counter() - started)
