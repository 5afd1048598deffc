// The view's state in the URL, so a view can be shared or reloaded: which workspace
// (ws), how many hubs were loaded and which neighbourhoods expanded (hubs, seeds), the
// selected node or edge (focus, edge), colours, filters, the path shown (path=from,to) and
// the zoom (z=k,x,y); the community map (view=map, c=3.2: the level or community drilled
// into, static/js/graph/communitymap.js) or the classic hubs view (view=graph). Written with
// history.replaceState (no history entry per pan; drills push their own entries); read once
// on load by main.js, which replays it.

import { emptyFilters } from "./store.js";

const MAX_SEEDS = 60;

function ids(text) {
  return (text || "")
    .split(",")
    .map((part) => Number(part))
    .filter((n) => Number.isSafeInteger(n) && n > 0);
}

function names(text) {
  return (text || "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}

function number(text) {
  const value = Number(text);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
// A community key: "3" top level, "3.2" sub-community 2 of community 3.
export const COMMUNITY_KEY = /^\d{1,9}(\.\d{1,9}){0,7}$/;
const VIEWS = new Set(["map", "graph"]);

export function readState(search = window.location.search) {
  const params = new URLSearchParams(search);
  const z = (params.get("z") || "").split(",").map(Number);
  const path = ids(params.get("path"));
  const hubs = params.get("hubs");
  return {
    ws: params.get("ws") || "",
    hubs: hubs === null || hubs === "" ? null : Math.max(0, Math.floor(number(hubs))),
    seeds: ids(params.get("seeds")).slice(-MAX_SEEDS),
    focus: ids(params.get("focus"))[0] || null,
    edge: ids(params.get("edge"))[0] || null,
    colour: params.get("colour") === "community" ? "community" : "type",
    filters: {
      ...emptyFilters(),
      types: names(params.get("types")),
      rtypes: names(params.get("rtypes")),
      source: ids(params.get("source"))[0] ? String(ids(params.get("source"))[0]) : "",
      after: DATE.test(params.get("after") || "") ? params.get("after") : "",
      before: DATE.test(params.get("before") || "") ? params.get("before") : "",
      minw: number(params.get("minw")),
      mindeg: Math.floor(number(params.get("mindeg"))),
    },
    z: z.length === 3 && z.every(Number.isFinite) && z[0] > 0 ? { k: z[0], x: z[1], y: z[2] } : null,
    path: path.length === 2 ? path : null,
    bench: params.get("bench") === "1",
    view: VIEWS.has(params.get("view")) ? params.get("view") : "",
    c: COMMUNITY_KEY.test(params.get("c") || "") ? params.get("c") : null,
    // Nothing asked for but the workspace: a big one opens on the community map.
    bare: [...params.keys()].every((key) => key === "ws" || key === "bench"),
  };
}

export function stateParams({ workspace, store, transform, bench }) {
  const { view } = store;
  const f = view.filters;
  const params = new URLSearchParams();
  params.set("ws", workspace);
  params.set("hubs", String(view.hubs));
  if (view.community) params.set("c", view.community);
  if (view.seeds.length) params.set("seeds", view.seeds.slice(-MAX_SEEDS).join(","));
  if (view.selected !== null) params.set("focus", String(view.selected));
  if (view.selectedEdge !== null) params.set("edge", String(view.selectedEdge));
  if (view.colour !== "type") params.set("colour", view.colour);
  if (f.types.length) params.set("types", f.types.join(","));
  if (f.rtypes.length) params.set("rtypes", f.rtypes.join(","));
  if (f.source) params.set("source", f.source);
  if (f.after) params.set("after", f.after);
  if (f.before) params.set("before", f.before);
  if (f.minw) params.set("minw", String(f.minw));
  if (f.mindeg) params.set("mindeg", String(f.mindeg));
  if (view.path && view.path.ends) params.set("path", view.path.ends.join(","));
  if (transform) {
    params.set("z", [transform.k.toFixed(4), transform.x.toFixed(1), transform.y.toFixed(1)].join(","));
  }
  if (bench) params.set("bench", "1");
  return params;
}

// Keeps the URL in step with the view (at most every 200 ms).
export function initUrlState({ workspace, store, renderer, interactions, bench }) {
  let timer = 0;
  let enabled = false;
  let suspended = false;
  function write() {
    timer = 0;
    if (!enabled || suspended) return;
    const params = stateParams({ workspace, store, transform: renderer.transform, bench });
    const url = `${window.location.pathname}?${params.toString()}`;
    if (url !== `${window.location.pathname}${window.location.search}`) {
      window.history.replaceState(window.history.state, "", url);
    }
  }
  function schedule() {
    if (!timer) timer = setTimeout(write, 200);
  }
  store.on("state", schedule);
  interactions.onZoomEnd(schedule);
  return {
    // Nothing is written until the state read from the URL has been replayed.
    enable() {
      enabled = true;
      schedule();
    },
    flush: write,
    // The community map keeps its own URL (view=map): the graph's state waits meanwhile.
    suspend(flag) {
      suspended = Boolean(flag);
      if (!suspended) schedule();
    },
  };
}
