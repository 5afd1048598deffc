"""What rendering a page costs the machine, per Chromium binary: `crawl --render` loads each
page that needs a browser in headless Chromium (ingest/crawler/render.py).

    .venv/bin/python bench/render.py [--pages 30] [--runs 3] [--executable chromium ...]

Renders `--pages` single-page-app pages (an empty shell whose script writes the text and
asks for one more resource, all answered from memory through the renderer's fetch hook, so
no server and no network) with one browser, for each executable given (default: Debian's
`chromium` and `chromium-headless-shell`, those on PATH). Prints, per executable, the median
over runs of the wall time and of the CPU time of the whole process tree (this process, the
Playwright driver, the browser and its renderers, read from a cgroup v1 `cpuacct` group;
CPU of this process and its reaped children where there is none) per page.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ingest.crawler.fetch import FetchResult
from ingest.crawler.render import Renderer

SHELL = b"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Timetable</title>
<script src="/static/app.js"></script></head><body><div id="root"></div></body></html>"""
APP = b"""document.addEventListener("DOMContentLoaded", function () {
  var text = "";
  for (var i = 0; i < 40; i++) { text += "<p>The ferry leaves the north quay at " + i + ".</p>"; }
  document.getElementById("root").innerHTML = "<h1>Timetable</h1>" + text;
  fetch("/data.json").then(function (r) { return r.json(); }).then(function (d) {
    document.getElementById("root").insertAdjacentHTML("beforeend", "<p>" + d.note + "</p>");
  });
});"""
RESOURCES = {
    "/static/app.js": (APP, "text/javascript"),
    "/data.json": (b'{"note": "Tickets at the kiosk."}', "application/json"),
}
CGROUP = Path("/sys/fs/cgroup/cpuacct")


def fetch(url: str, before_request: object) -> FetchResult:
    body, kind = RESOURCES.get(urlsplit(url).path, (b"", "text/plain"))
    return FetchResult(
        url=url, status=200 if body else 404, headers={}, content=body, content_type=kind
    )


class TreeCpu:
    """CPU seconds of this process and everything it starts."""

    def __init__(self) -> None:
        self.group: Path | None = CGROUP / f"bench_render_{os.getpid()}"
        try:
            self.group.mkdir()
            (self.group / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            self.group = None

    def seconds(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    def close(self) -> None:
        if self.group is not None:
            (CGROUP / "cgroup.procs").write_text(str(os.getpid()))
            self.group.rmdir()


def one_run(executable: str, pages: int, cpu: TreeCpu) -> tuple[float, float]:
    """(wall ms, CPU ms) per page, the browser's start included (one browser per crawl)."""
    start_wall, start_cpu = time.monotonic(), cpu.seconds()
    with Renderer(
        executable=executable,
        fetch=fetch,
        allowed=lambda url: True,
        timeout=20.0,
        max_bytes=5_000_000,
    ) as renderer:
        for number in range(pages):
            result = renderer.render(f"http://127.0.0.1:9/page/{number}", SHELL, "text/html")
            assert "Tickets at the kiosk" in result.html, result.html[:300]
    wall, used = time.monotonic() - start_wall, cpu.seconds() - start_cpu
    return wall * 1000 / pages, used * 1000 / pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--executable", action="append")
    args = parser.parse_args()
    executables = args.executable or [
        found for name in ("chromium", "chromium-headless-shell") if (found := shutil.which(name))
    ]
    cpu = TreeCpu()
    try:
        for executable in executables:
            runs = [one_run(executable, args.pages, cpu) for _ in range(args.runs)]
            print(
                f"{executable}: {statistics.median(w for w, _ in runs):.0f} ms and "
                f"{statistics.median(c for _, c in runs):.0f} CPU-ms per page "
                f"(median of {args.runs} runs of {args.pages} pages, the browser's start included)"
            )
    finally:
        cpu.close()


if __name__ == "__main__":
    main()
