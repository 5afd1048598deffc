"""Explorer benchmark (issue 8): the graph page in headless Chromium at 1k, 5k and 10k nodes.

    .venv/bin/python bench/explorer.py [--sizes 1000,5000,10000] [--seconds 4] [--keep]
                                       [--screenshot docs/img/explorer-5k.png]

For each size a synthetic workspace is loaded set-based in SQL (bench/graph_run.py's
generator: power-law degrees, the default types; relations = 2 x entities), then a
production server is started (`gunicorn config.wsgi`, config.settings.production after
`collectstatic`, so static URLs are hashed as in a deployment) on the bench database
(`graphloom_bench`), and Debian's Chromium, driven by Playwright, signs in and opens
`/explore/?hubs=N&bench=1`, which loads every node and edge through the explorer's bulk
endpoint. The page's measuring hook (static/js/graph/perf.js, present only with bench=1)
gives, in ms since navigation started:

- first paint: the first frame that drew nodes;
- settled: when the layout worker reported the layout cooled (time to a settled layout);

then, after settling, the real mouse pans the view (a press on empty canvas) and drags the
best-connected node (the worker re-heats the layout, so everything moves) for `--seconds`
each, while the page counts requestAnimationFrame callbacks (fps) and the frames that drew
the graph; then it zooms in on that node (scale 1.5: past the thresholds of arrowheads and
edge labels, static/js/graph/render.js) and drags it again ("drag_zoomed"), reporting how
many arrowheads and type labels the still view drew there. The graph endpoint's payload
is fetched once more to report bytes per node (raw, and gzip for reference). A screenshot
of the 5k view goes to `--screenshot`. Prints JSON, one line per size and a summary; the
workspaces are dropped afterwards unless `--keep`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ["GRAPHLOOM_DB_NAME"] = "graphloom_bench"
    os.environ.setdefault("GRAPHLOOM_LOG_LEVEL", "WARNING")
    import django

    django.setup()

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

from tests.browser.chromium import CHROMIUM_FLAGS, chromium_path  # noqa: E402

USERNAME = "bench-explorer"
PASSWORD = "bench-explorer-password-1"  # noqa: S105 (a throwaway account in the bench database)
VIEWPORT: Any = {"width": 1440, "height": 900}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env() -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "bench-only-not-secret-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GRAPHLOOM_SSL_REDIRECT": "0",
        "GRAPHLOOM_SECURE_COOKIES": "0",
        "GRAPHLOOM_DB_NAME": "graphloom_bench",
    }


def collect_static() -> None:
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=server_env(),
        check=True,
    )


def start_server(port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "2", "--threads", "4", "--worker-class", "gthread",
         "--timeout", "180", "--log-level", "warning"],
        cwd=ROOT, env=server_env(), start_new_session=True,
    )  # fmt: skip


def wait_for(base: str) -> None:
    import httpx

    for _ in range(240):
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=5).status_code in (200, 503):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the server did not start")


def prepare(sizes: list[int]) -> dict[int, Any]:
    """A workspace per size (reused when complete), and the bench user as a viewer of each."""
    from django.contrib.auth import get_user_model

    from bench.graph_run import settle, workspace_for
    from workspaces.actions.workspaces import do_create_user, do_set_membership
    from workspaces.models import Role

    user = get_user_model().objects.filter(username=USERNAME).first()
    if user is None:
        user = do_create_user(username=USERNAME, password=PASSWORD)
    else:
        user.set_password(PASSWORD)
        user.save()
    workspaces = {}
    for size in sizes:
        workspace, loaded = workspace_for(entities=size, relations=2 * size, seed=8)
        do_set_membership(workspace=workspace, username=USERNAME, role=Role.VIEWER)
        workspaces[size] = workspace
        print(
            json.dumps({"prepared": workspace.slug, "load_s": loaded and round(loaded, 1)}),
            flush=True,
        )
    settle(wait=0)
    return workspaces


def sign_in(page: Any) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/login/" not in url)


def move_for(page: Any, start: tuple[float, float], seconds: float) -> dict[str, Any]:
    """Press at `start`, move the mouse in circles for `seconds`, release; the page counts
    frames meanwhile."""
    x0, y0 = start
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.evaluate("graphloomBench.startFrames()")
    started = time.perf_counter()
    step = 0
    moves = 0
    while time.perf_counter() - started < seconds:
        angle = step * 0.08
        page.mouse.move(x0 + 90 * math.sin(angle), y0 + 90 * (1 - math.cos(angle)))
        step += 1
        moves += 1
    frames = page.evaluate("graphloomBench.stopFrames()")
    page.mouse.up()
    frames["mouse_moves"] = moves
    return {
        key: round(value, 2) if isinstance(value, float) else value for key, value in frames.items()
    }


def measure(
    context: Any, slug: str, size: int, *, seconds: float, screenshot: Path | None
) -> dict[str, Any]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    payload = page.request.get(f"/api/v1/workspaces/{slug}/graph?hubs={size}")
    body = payload.body()
    data = json.loads(body)
    nodes = len(data["nodes"])
    page.goto(f"/explore/?ws={slug}&hubs={size}&bench=1")
    page.wait_for_function(
        "() => window.graphloomBench && window.graphloomBench.marks.settled !== null",
        timeout=300_000,
        polling=100,
    )
    marks = page.evaluate("graphloomBench.marks")
    counts = page.evaluate("graphloomBench.counts()")
    page.wait_for_timeout(500)
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot))
    canvas = page.locator("#graph-canvas").bounding_box()
    empty = page.evaluate("graphloomBench.emptyPoint()")
    pan = (
        move_for(page, (canvas["x"] + empty[0], canvas["y"] + empty[1]), seconds) if empty else None
    )
    page.evaluate("graphloomBench.fit()")
    page.wait_for_function(
        "() => document.getElementById('graph-canvas').dataset.layout === 'settled'",
        timeout=300_000,
    )
    hub = page.evaluate("graphloomBench.hubOnScreen()")
    drag = move_for(page, (canvas["x"] + hub[0], canvas["y"] + hub[1]), seconds)
    page.wait_for_function(
        "() => document.getElementById('graph-canvas').dataset.layout === 'settled'",
        timeout=300_000,
    )
    page.evaluate("graphloomBench.zoomOnHub(1.5)")
    page.wait_for_timeout(300)
    details = page.evaluate(
        "(() => { const d = graphloomBench.drawn();"
        " return {arrows: d.arrows.length, edge_labels: d.edgeLabels.length}; })()"
    )
    hub = page.evaluate("graphloomBench.hubOnScreen()")
    drag_zoomed = move_for(page, (canvas["x"] + hub[0], canvas["y"] + hub[1]), seconds)
    page.close()
    return {
        "entities": size,
        "relations": 2 * size,
        "loaded": counts,
        "payload_bytes": len(body),
        "payload_bytes_per_node": round(len(body) / max(1, nodes), 1),
        "payload_gzip_bytes_per_node": round(len(gzip.compress(body)) / max(1, nodes), 1),
        "first_paint_ms": round(marks["firstPaint"]),
        "data_loaded_ms": round(marks["dataLoaded"]),
        "settled_ms": round(marks["settled"]),
        "layout_ms": round(marks["settled"] - marks["dataLoaded"]),
        "pan": pan,
        "drag": drag,
        "zoomed_details": details,
        "drag_zoomed": drag_zoomed,
        "script_errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Explorer benchmark; see bench/explorer.py.")
    parser.add_argument("--sizes", default="1000,5000,10000")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--keep", action="store_true", help="keep the bench workspaces")
    parser.add_argument("--screenshot", default=str(ROOT / "docs" / "img" / "explorer-5k.png"))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    from django.core.management import call_command
    from playwright.sync_api import sync_playwright

    from bench.cleanup import drop_workspace

    chromium = chromium_path()
    if not chromium:
        raise SystemExit("chromium is not installed (scripts/system-deps.sh installs it).")
    call_command("migrate", verbosity=0)
    workspaces = prepare(sizes)
    collect_static()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(port)
    results = []
    load = os.getloadavg()
    try:
        wait_for(base)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium, headless=True, args=CHROMIUM_FLAGS
            )
            context = browser.new_context(base_url=base, viewport=VIEWPORT)
            context.set_default_timeout(120_000)
            page = context.new_page()
            sign_in(page)
            # Warm-up: static files cached, server code paths loaded.
            first = workspaces[sizes[0]]
            page.goto(f"/explore/?ws={first.slug}&hubs=200")
            page.wait_for_selector("#explorer[data-ready=true]")
            page.close()
            for size in sizes:
                shot = Path(args.screenshot) if size == 5000 else None
                result = measure(
                    context, workspaces[size].slug, size, seconds=args.seconds, screenshot=shot
                )
                results.append(result)
                print(json.dumps(result), flush=True)
            browser.close()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        if not args.keep:
            for workspace in workspaces.values():
                drop_workspace(workspace)
    print(
        json.dumps(
            {
                "machine": {"cpus": os.cpu_count(), "loadavg_at_start": load},
                "viewport": VIEWPORT,
                "summary": [
                    {
                        "entities": r["entities"],
                        "relations": r["relations"],
                        "first_paint_ms": r["first_paint_ms"],
                        "settled_ms": r["settled_ms"],
                        "pan_fps": r["pan"] and r["pan"]["fps"],
                        "drag_fps": r["drag"]["fps"],
                        "drag_zoomed_fps": r["drag_zoomed"]["fps"],
                        "payload_bytes_per_node": r["payload_bytes_per_node"],
                    }
                    for r in results
                ],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
