"""Explorer benchmark (issues 8 and 19): the graph page in headless Chromium at 1k, 5k, 10k,
20k and 50k nodes.

    .venv/bin/python bench/explorer.py [--sizes 1000,5000,10000,20000,50000] [--seconds 4] [--keep]
                                       [--runs 3] [--screenshot docs/img/explorer-5k.png]
    .venv/bin/python bench/explorer.py --community-map 200000 [--runs 3] [--keep]

For each size a synthetic workspace is loaded set-based in SQL (bench/graph_run.py's
generator: power-law degrees, the default types; relations = 2 x entities), then a
production server is started (`gunicorn config.wsgi`, config.settings.production after
`collectstatic`, so static URLs are hashed as in a deployment) on the bench database
(`graphloom_bench`, or GRAPHLOOM_BENCH_DB_NAME), and Debian's Chromium, driven by
Playwright, signs in and opens `/explore/?hubs=N&bench=1`, which loads every node and edge
through the explorer's bulk endpoint. The page's measuring hook (static/js/graph/perf.js,
present only with bench=1) gives, in ms since navigation started:

- first paint: the first frame that drew nodes;
- settled: when the layout worker reported the layout cooled (time to a settled layout);

then, after settling, the real mouse pans the view (a press on empty canvas) and drags the
best-connected node (the worker re-heats the layout, so everything moves) for `--seconds`
each, while the page counts requestAnimationFrame callbacks (fps) and the frames that drew
the graph; then it zooms in on that node (scale 1.5: past the thresholds of arrowheads and
edge labels, static/js/graph/render.js) and drags it again ("drag_zoomed"), reporting how
many arrowheads and type labels the still view drew there; once the layout has settled
again, a click on that node, timed from the click event to the frame showing its panel
("click_to_panel_ms"; issue 19 asks for under a second). The graph endpoint's payload
is fetched once more to report bytes per node (raw, and gzip for reference), in the object
shape and in the compact one the explorer asks for (`format=columns`). A screenshot
of the 5k view goes to `--screenshot` (or of every size, when it holds `{size}`). With
`--runs N` each size is measured N times (a fresh page each) and the medians are
reported. Prints JSON, one line per size and a summary; the workspaces are dropped
afterwards unless `--keep`.

`--community-map N` measures the community map instead (issue 19): a planted workspace of
N entities from bench/community_map.py's `load_planted` (in its database,
`graphloom_bench_map`, so either bench reuses the other's workspace with --keep), its
communities computed unless a current map is stored, then
per run: the map's first paint (`/explore/?view=map`: ms until the map canvas says
`data-state="drawn"`), frames per second while the mouse pans the map, and the drill-down
from the largest community to a drawn picture of its entities (through sub-maps while the
community has sub-communities: each step's time), then panning those entities; with
`--screenshot docs/img/community-{view}.png` the first run pictures the map and the drill.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    # GRAPHLOOM_BENCH_DB_NAME: another database than graphloom_bench (runs side by side); the
    # community map's is bench/community_map.py's, so both reuse one planted workspace.
    default_db = "graphloom_bench_map" if "--community-map" in sys.argv else "graphloom_bench"
    os.environ["GRAPHLOOM_DB_NAME"] = os.environ.get("GRAPHLOOM_BENCH_DB_NAME", default_db)
    os.environ.setdefault("GRAPHLOOM_LOG_LEVEL", "WARNING")
    import django

    django.setup()

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

from bench.server import collect_static, free_port, start_server, wait_for  # noqa: E402
from tests.browser.chromium import CHROMIUM_FLAGS, chromium_path  # noqa: E402

USERNAME = "bench-explorer"
PASSWORD = "bench-explorer-password-1"  # noqa: S105 (a throwaway account in the bench database)
VIEWPORT: Any = {"width": 1440, "height": 900}


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


def signed_in_browser(playwright: Any, chromium: str, base: str) -> tuple[Any, Any, Any]:
    """Chromium (headless, the bench's flags), a context on the server and a page signed
    in to it."""
    browser = playwright.chromium.launch(
        executable_path=chromium, headless=True, args=CHROMIUM_FLAGS
    )
    context = browser.new_context(base_url=base, viewport=VIEWPORT)
    context.set_default_timeout(120_000)
    page = context.new_page()
    sign_in(page)
    return browser, context, page


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
    layers = page.evaluate("graphloomBench.layers()")
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
    after = page.evaluate("graphloomBench.layers()")
    page.mouse.up()
    frames["mouse_moves"] = moves
    # Of a drag's frames, those drawn on a still layer, and how often that layer was drawn.
    frames["layer_frames"] = after["moving"] - layers["moving"]
    frames["still_layers"] = after["still"] - layers["still"]
    return {
        key: round(value, 2) if isinstance(value, float) else value for key, value in frames.items()
    }


# In the page: when the canvas gets the click (the event's own time stamp), and the first
# animation frame in which the panel's title names the node (issue 19: within a second).
CLICK_TO_PANEL = """(name) => {
  window.clickToPanel = null;
  document.getElementById("graph-canvas").addEventListener("click", (event) => {
    const clicked = event.timeStamp;
    const poll = () => {
      const title = document.getElementById("panel-title");
      if (title && title.textContent.trim() === name) {
        window.clickToPanel = { ms: performance.now() - clicked };
      } else {
        requestAnimationFrame(poll);
      }
    };
    requestAnimationFrame(poll);
  }, { capture: true, once: true });
}"""


def click_to_panel(page: Any, canvas: dict[str, float]) -> float:
    """Click the best-connected node of the settled view; ms from the click event to the
    frame showing its panel, as the page times them."""
    hub = page.evaluate("graphloomBench.hub()")
    page.evaluate(CLICK_TO_PANEL, hub["name"])
    page.mouse.click(canvas["x"] + hub["x"], canvas["y"] + hub["y"])
    answered = page.wait_for_function("() => window.clickToPanel || false", timeout=60_000)
    return round(answered.json_value()["ms"], 1)


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
    # The shape the explorer asks for (format=columns), raw and as gzip'd on the wire.
    columns = page.request.get(
        f"/api/v1/workspaces/{slug}/graph?hubs={size}&format=columns",
        headers={"Accept-Encoding": "identity"},
    ).body()
    wire = page.request.get(
        f"/api/v1/workspaces/{slug}/graph?hubs={size}&format=columns",
        headers={"Accept-Encoding": "gzip"},
    )
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
    page.wait_for_function(
        "() => document.getElementById('graph-canvas').dataset.layout === 'settled'",
        timeout=300_000,
    )
    clicked = click_to_panel(page, canvas)
    page.close()
    return {
        "entities": size,
        "relations": 2 * size,
        "loaded": counts,
        "payload_bytes": len(body),
        "payload_gzip_bytes": len(gzip.compress(body)),
        "payload_columns_bytes": len(columns),
        "payload_columns_gzip_bytes": len(gzip.compress(columns)),
        # What the explorer gets: the columns, gzip'd by the server (config/compression.py).
        "payload_columns_served_gzip": wire.headers.get("content-encoding") == "gzip",
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
        "click_to_panel_ms": clicked,
        "script_errors": errors,
    }


def median_of(runs: list[Any]) -> Any:
    """The runs' results combined field by field: numbers by their median, lists (script
    errors) joined, anything else as the first run has it."""
    first = runs[0]
    if isinstance(first, dict):
        return {
            key: median_of([run[key] for run in runs if isinstance(run, dict)]) for key in first
        }
    if isinstance(first, bool) or first is None:
        return first
    if isinstance(first, int | float):
        numbers = [run for run in runs if isinstance(run, int | float)]
        if all(number == first for number in numbers):
            return first
        middle = statistics.median(numbers)
        return round(middle, 2) if isinstance(middle, float) else middle
    if isinstance(first, list):
        return [item for run in runs for item in run]
    return first


# --- the community map (--community-map) ---------------------------------------------------


def planted_workspace(entities: int) -> Any:
    """The planted workspace of bench/community_map.py (MAP-SERVER), the bench user a viewer,
    its communities computed (once: kept with --keep). The one place that knows the loader's
    signature."""
    from bench.community_map import load_planted
    from knowledge.actions.communities import do_compute_communities
    from knowledge.selectors.community_map import last_run, map_is_stale
    from workspaces.actions.workspaces import do_set_membership
    from workspaces.models import Role, Workspace

    loaded = load_planted(entities=entities)
    candidates = loaded if isinstance(loaded, tuple | list) else [loaded]
    workspace = next(w for w in candidates if isinstance(w, Workspace))
    do_set_membership(workspace=workspace, username=USERNAME, role=Role.VIEWER)
    started = time.perf_counter()
    run = last_run(workspace)
    computed = run is None or map_is_stale(run, workspace)
    if computed:
        do_compute_communities(workspace=workspace)
    seconds = round(time.perf_counter() - started, 1) if computed else None
    print(json.dumps({"prepared": workspace.slug, "communities_s": seconds}), flush=True)
    return workspace


MAP_DRAWN = """() => {
  const state = document.getElementById("map-canvas")?.dataset.state;
  return state === "drawn" || state === "stale" ? performance.now() : false;
}"""
ENTITIES_DRAWN = """() => {
  const marks = window.graphloomBench && window.graphloomBench.marks;
  return marks && marks.firstPaint !== null ? marks.firstPaint : false;
}"""
# Click the largest community listed (the list follows the map, largest first), noting when.
DRILL = """() => {
  const button = document.querySelector("#map-list-items button[data-key]");
  if (!button) return null;
  const key = button.dataset.key;
  const at = performance.now();
  button.click();
  return { key, at };
}"""
SUB_MAP_DRAWN = """(key) => {
  const canvas = document.getElementById("map-canvas");
  const state = canvas?.dataset.state;
  return !canvas.hidden && canvas.dataset.level === key && (state === "drawn" || state === "stale")
    ? performance.now() : false;
}"""


def screenshot_for(template: str, size: int) -> Path | None:
    """`--screenshot` with `{size}` names one picture per size; without it, only the 5k
    view is pictured (as in the issue 8 figures)."""
    if "{size}" in template:
        return Path(template.format(size=size))
    return Path(template) if size == 5000 else None


def measure_map(
    context: Any, slug: str, *, seconds: float, screenshots: str | None = None
) -> dict[str, Any]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # The API calls the map and the drills made, with their durations (ms), to tell the
    # server's share of a slow step from the page's.
    calls: list[list[Any]] = []

    def finished(request: Any) -> None:
        if "/api/" in request.url:
            path = request.url.split("/api/v1", 1)[-1]
            calls.append([path, round(request.timing["responseEnd"])])

    page.on("requestfinished", finished)
    page.goto(f"/explore/?ws={slug}&view=map&bench=1")
    first_paint = page.wait_for_function(MAP_DRAWN, timeout=300_000, polling="raf").json_value()
    box = page.locator("#map-canvas").bounding_box()
    pan = move_for(page, (box["x"] + 60, box["y"] + box["height"] - 60), seconds)
    page.wait_for_timeout(300)
    if screenshots:
        page.screenshot(path=screenshots.format(view="map"))
    steps = []
    for _ in range(4):  # top level, sub-communities, ... down to entities
        click = page.evaluate(DRILL)
        if click is None:
            break
        drawn = page.wait_for_function(
            f"() => ({ENTITIES_DRAWN})() || ({SUB_MAP_DRAWN})({json.dumps(click['key'])})",
            timeout=300_000,
            polling="raf",
        ).json_value()
        entities = page.evaluate(f"({ENTITIES_DRAWN})()") is not False
        steps.append({"key": click["key"], "ms": round(drawn - click["at"]), "entities": entities})
        if entities:
            break
    counts = page.evaluate("graphloomBench.counts()")
    if screenshots:
        page.wait_for_timeout(1500)  # the drilled community's layout, mostly settled
        page.screenshot(path=screenshots.format(view="drill"))
    empty = page.evaluate("graphloomBench.emptyPoint()")
    canvas = page.locator("#graph-canvas").bounding_box()
    drilled_pan = (
        move_for(page, (canvas["x"] + empty[0], canvas["y"] + empty[1]), seconds)
        if empty and counts["nodes"]
        else None
    )
    page.close()
    return {
        "map_first_paint_ms": round(first_paint),
        "map_pan": pan,
        "drill_steps": steps,
        "drill_ms": sum(step["ms"] for step in steps),
        "drilled": counts,
        "drilled_pan": drilled_pan,
        "api_calls_ms": calls,
        "script_errors": errors,
    }


def main_map(args: argparse.Namespace) -> None:
    from django.core.management import call_command
    from playwright.sync_api import sync_playwright

    from bench.cleanup import drop_workspace

    chromium = chromium_path()
    if not chromium:
        raise SystemExit("chromium is not installed (scripts/system-deps.sh installs it).")
    call_command("migrate", verbosity=0)
    prepare([])
    workspace = planted_workspace(args.community_map)
    collect_static()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(port)
    runs = []
    load = os.getloadavg()
    try:
        wait_for(base)
        with sync_playwright() as playwright:
            browser, context, page = signed_in_browser(playwright, chromium, base)
            page.close()
            for run in range(args.runs):
                # `--screenshot` with `{view}`: the map and the drill-down pictured (run 1).
                shots = args.screenshot if run == 0 and "{view}" in args.screenshot else None
                runs.append(
                    measure_map(context, workspace.slug, seconds=args.seconds, screenshots=shots)
                )
                print(json.dumps(runs[-1]), flush=True)
            browser.close()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        if not args.keep:
            drop_workspace(workspace)
    result = median_of(runs)
    print(
        json.dumps(
            {
                "machine": {"cpus": os.cpu_count(), "loadavg_at_start": load},
                "viewport": VIEWPORT,
                "runs": args.runs,
                "community_map": {
                    "entities": args.community_map,
                    "map_first_paint_ms": result["map_first_paint_ms"],
                    "map_pan_fps": result["map_pan"]["fps"],
                    "drill_ms": result["drill_ms"],
                    "drill_steps": [
                        [s["key"], s["ms"], s["entities"]] for r in runs for s in r["drill_steps"]
                    ],
                    "drilled_nodes": result["drilled"]["nodes"],
                    "drilled_pan_fps": result["drilled_pan"] and result["drilled_pan"]["fps"],
                },
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Explorer benchmark; see bench/explorer.py.")
    parser.add_argument("--sizes", default="1000,5000,10000,20000,50000")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--keep", action="store_true", help="keep the bench workspaces")
    parser.add_argument("--screenshot", default=str(ROOT / "docs" / "img" / "explorer-5k.png"))
    parser.add_argument("--runs", type=int, default=1, help="measure N times, report medians")
    parser.add_argument(
        "--community-map", type=int, metavar="ENTITIES", help="measure the community map instead"
    )
    args = parser.parse_args()
    if args.community_map:
        main_map(args)
        return
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
            browser, context, page = signed_in_browser(playwright, chromium, base)
            # Warm-up: static files cached, server code paths loaded.
            first = workspaces[sizes[0]]
            page.goto(f"/explore/?ws={first.slug}&hubs=200")
            page.wait_for_selector("#explorer[data-ready=true]")
            page.close()
            for size in sizes:
                runs = []
                for run in range(args.runs):
                    shot = screenshot_for(args.screenshot, size) if run == 0 else None
                    runs.append(
                        measure(
                            context,
                            workspaces[size].slug,
                            size,
                            seconds=args.seconds,
                            screenshot=shot,
                        )
                    )
                result = {**median_of(runs), "runs": args.runs}
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
                "runs": args.runs,
                "summary": [
                    {
                        "entities": r["entities"],
                        "relations": r["relations"],
                        "first_paint_ms": r["first_paint_ms"],
                        "settled_ms": r["settled_ms"],
                        "pan_fps": r["pan"] and r["pan"]["fps"],
                        "drag_fps": r["drag"]["fps"],
                        "drag_zoomed_fps": r["drag_zoomed"]["fps"],
                        "click_to_panel_ms": r["click_to_panel_ms"],
                        "pan_mean_draw_and_raster_ms": r["pan"]
                        and r["pan"]["mean_draw_and_raster_ms"],
                        "drag_mean_draw_and_raster_ms": r["drag"]["mean_draw_and_raster_ms"],
                        "payload_bytes_per_node": r["payload_bytes_per_node"],
                        "payload_columns_bytes": r["payload_columns_bytes"],
                        "payload_columns_gzip_bytes": r["payload_columns_gzip_bytes"],
                        "payload_columns_served_gzip": r["payload_columns_served_gzip"],
                    }
                    for r in results
                ],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
