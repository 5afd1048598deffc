"""How every benchmark script starts when run as `python bench/<name>.py`: the project on
sys.path, its own database (`graphloom_bench`) on the embedded server, quiet logs, Django
set up, then the `<name>_run` module's `main()`. The scripts call this only under
`if __name__ == "__main__"`: parsers' child processes ("spawn") import a script again and
must stay light."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from importlib import import_module


def run(
    module: str,
    *,
    env: Mapping[str, str] | None = None,
    drop_env_prefixes: Sequence[str] = (),
    media_prefix: str | None = None,
) -> None:
    """Set up the environment (`env` on top; variables starting with one of
    `drop_env_prefixes` removed, so a developer's own settings cannot skew a run), then
    Django, then `module.main()`. With `media_prefix`, uploads and blobs go to a temporary
    directory of that prefix, removed when the run ends (however it ends)."""
    if media_prefix is None:
        _run(module, env, drop_env_prefixes)
        return
    media = tempfile.mkdtemp(prefix=media_prefix)
    try:
        _run(module, {**(env or {}), "GRAPHLOOM_MEDIA_ROOT": media}, drop_env_prefixes)
    finally:
        shutil.rmtree(media, ignore_errors=True)


def _run(module: str, env: Mapping[str, str] | None, drop_env_prefixes: Sequence[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ["GRAPHLOOM_DB_NAME"] = "graphloom_bench"
    os.environ.setdefault("GRAPHLOOM_LOG_LEVEL", "WARNING")
    os.environ.update(env or {})
    for name in [
        k for k in os.environ if drop_env_prefixes and k.startswith(tuple(drop_env_prefixes))
    ]:
        del os.environ[name]
    import django

    django.setup()
    import_module(module).main()
