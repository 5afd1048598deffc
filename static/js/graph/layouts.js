// Layouts that persist: a settled layout is saved per view of the workspace
// (GET/PUT/DELETE …/layouts?view=<key>, explorer/layout_api.py), so reopening the page, or
// a colleague opening its URL, shows the same picture at once instead of simulating it
// again.
//
// A view is what decides which nodes are loaded: the hubs, the community drilled into, the
// expanded seeds, the filters and the path, in a canonical order (viewKey). Zoom,
// selection and colours change how the view is looked at, not where its nodes are, so
// they are not part of it.
//
// Restoring (arm, then release once loading is done): the simulation holds
// (simulation.js) while the view loads, every node with a saved position is put exactly
// there, a node without one (new since the save) next to its placed neighbours, and
// nothing is simulated until someone drags a node or presses "Re-run layout".
// Saving: when the layout settles (debounced), editors' pages store the view's positions
// rounded to hundredths, unless the person unticked "Remember layout" (kept in this
// browser). Ghost nodes (negative ids, neighbouring communities of a drill) never are.
// `data-saved-layout` on the explorer says what happened: "restored", "saved", "none".

import { csrfToken } from "../csrf-token.js";

// The server's bounds (explorer/models.py).
const MAX_VIEW_KEY = 500;
const MAX_NODES = 100_000;
const MAX_COORDINATE = 1_000_000;
// How long a layout must stay settled before it is saved: a drag's cooling, a second
// expansion right after the first, do not each cost a request.
const SAVE_DELAY_MS = 800;
// A node placed next to its neighbours lands within this distance of their mean.
const JITTER = 12;
const OPT_OUT = "graphloom.layouts.remember";

// The canonical key of a view: {hubs, community, seeds, filters, path: [from, to] | null}.
export function viewKey({ hubs = 0, community = null, seeds = [], filters = {}, path = null }) {
  const sorted = (list) => [...(list || [])].map(String).sort();
  const parts = [];
  if (community) parts.push(["c", community]);
  if (hubs > 0) parts.push(["hubs", String(hubs)]);
  if (seeds.length) parts.push(["seeds", [...new Set(seeds)].map(Number).sort((a, b) => a - b).join(",")]);
  if (filters.types && filters.types.length) parts.push(["types", sorted(filters.types).join(",")]);
  if (filters.rtypes && filters.rtypes.length) parts.push(["rtypes", sorted(filters.rtypes).join(",")]);
  for (const name of ["source", "after", "before", "minw", "mindeg"]) {
    if (filters[name]) parts.push([name, String(filters[name])]);
  }
  if (path && path.length === 2) parts.push(["path", path.join(",")]);
  const key = parts.map(([name, value]) => `${name}=${encodeURIComponent(value).replaceAll("%2C", ",")}`).join("&") || "empty";
  // A very long key (many seeds) keeps its start and a digest of the whole.
  return key.length <= MAX_VIEW_KEY ? key : `${key.slice(0, MAX_VIEW_KEY - 20)}~${digest(key)}`;
}

// 53 bits of a string (two 32-bit multiply-xorshift lanes), as 14 hex digits: enough to
// tell apart the long keys of one workspace; not for anything secret.
function digest(text) {
  let a = 0xdeadbeef;
  let b = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 2654435761);
    b = Math.imul(b ^ c, 1597334677);
  }
  a = Math.imul(a ^ (a >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
  b = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(a ^ (a >>> 13), 3266489909);
  return (4294967296 * (2097151 & b) + (a >>> 0)).toString(16).padStart(14, "0");
}

// The key of what the store has loaded now.
export function currentKey(view) {
  return viewKey({
    hubs: view.hubs,
    community: view.community,
    seeds: view.seeds,
    filters: view.filters,
    path: view.path && view.path.ends ? view.path.ends : null,
  });
}

const round = (v) => Math.round(v * 100) / 100;

export function initLayouts({ root, apiBase, store, simulation, canvas, canSave, remember, rerunButton, bench }) {
  const graph = store.graph;
  let saved = null; // Map id -> [x, y] of the layout being restored
  let placedHere = new Set(); // ids placed next to their neighbours during this restore
  let lastSaved = ""; // "key\nbody" of the last layout saved or restored, not saved again
  let timer = 0;
  let ready = false;
  let storage = null;
  try {
    storage = window.localStorage;
  } catch {
    storage = null; // storage blocked: the choice lasts as long as the page
  }

  if (remember) {
    remember.checked = !storage || storage.getItem(OPT_OUT) !== "off";
    remember.addEventListener("change", () => {
      if (storage) storage.setItem(OPT_OUT, remember.checked ? "on" : "off");
      if (remember.checked) schedule();
    });
  }
  const saving = () => canSave && (!remember || remember.checked);

  function url(key) {
    return `${apiBase}/layouts?view=${encodeURIComponent(key)}`;
  }

  function status(text) {
    root.dataset.savedLayout = text;
  }

  // Every node where it was saved; the others at the mean of their placed neighbours
  // (a few rounds, so a chain of new nodes grows out of the saved ones), plus a little
  // jitter so they do not sit on top of each other.
  function place() {
    const n = graph.nodes.length;
    const placed = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const id = graph.nodes[i].id;
      const at = saved.get(id);
      if (at) {
        graph.pos[2 * i] = at[0];
        graph.pos[2 * i + 1] = at[1];
        placed[i] = 1;
      } else if (placedHere.has(id)) {
        placed[i] = 1;
      }
    }
    const neighbours = Array.from({ length: n }, () => []);
    for (const edge of graph.edges) {
      neighbours[edge.s].push(edge.t);
      neighbours[edge.t].push(edge.s);
    }
    for (let pass = 0; pass < 4; pass++) {
      const now = [];
      for (let i = 0; i < n; i++) {
        if (placed[i]) continue;
        let x = 0;
        let y = 0;
        let count = 0;
        for (const j of neighbours[i]) {
          if (!placed[j]) continue;
          x += graph.pos[2 * j];
          y += graph.pos[2 * j + 1];
          count += 1;
        }
        if (count) now.push([i, x / count, y / count]);
      }
      if (!now.length) break;
      for (const [i, x, y] of now) {
        const angle = Math.random() * 2 * Math.PI;
        const radius = JITTER * (0.5 + Math.random() / 2);
        graph.pos[2 * i] = x + radius * Math.cos(angle);
        graph.pos[2 * i + 1] = y + radius * Math.sin(angle);
        placed[i] = 1;
        placedHere.add(graph.nodes[i].id);
      }
    }
  }

  // Ask for the view's saved layout; when there is one, hold the simulation so what
  // loads next is placed, not simulated. True when this call armed it.
  async function arm(key) {
    if (simulation.held) return false;
    let layout = null;
    try {
      const response = await fetch(url(key), { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.ok) layout = await response.json();
    } catch {
      layout = null; // no saved layout reachable: lay the view out as usual
    }
    if (simulation.held) return false; // another restore got there first
    if (!layout || !layout.count) {
      status("none");
      return false;
    }
    saved = new Map();
    for (let i = 0; i < layout.nodes.length; i++) saved.set(layout.nodes[i], [layout.x[i], layout.y[i]]);
    placedHere = new Set();
    lastSaved = `${key}\n${JSON.stringify({ nodes: layout.nodes, x: layout.x, y: layout.y })}`;
    simulation.hold(place);
    status("restored");
    return true;
  }

  // Loading is done: the picture stays as it is until a change, a drag or a re-run.
  function release() {
    simulation.release();
    saved = null;
    markReady();
  }

  // From now on a settled layout is the view's (not a step of loading it): save it.
  function markReady() {
    ready = true;
    schedule();
  }

  function body() {
    const nodes = [];
    const x = [];
    const y = [];
    for (let i = 0; i < graph.nodes.length && nodes.length < MAX_NODES; i++) {
      const node = graph.nodes[i];
      if (node.ghost || !(node.id > 0)) continue;
      const px = round(graph.pos[2 * i]);
      const py = round(graph.pos[2 * i + 1]);
      if (!Number.isFinite(px) || !Number.isFinite(py) || Math.abs(px) > MAX_COORDINATE || Math.abs(py) > MAX_COORDINATE) return null;
      nodes.push(node.id);
      x.push(px);
      y.push(py);
    }
    return nodes.length ? { nodes, x, y } : null;
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(save, SAVE_DELAY_MS);
  }

  async function save() {
    timer = 0;
    if (!ready || !saving() || simulation.held || canvas.dataset.layout !== "settled") return;
    const key = currentKey(store.view);
    const payload = body();
    if (!payload) return;
    const text = JSON.stringify(payload);
    if (`${key}\n${text}` === lastSaved) return;
    lastSaved = `${key}\n${text}`;
    try {
      const response = await fetch(url(key), {
        method: "PUT",
        headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: text,
        credentials: "same-origin",
      });
      if (!response.ok) throw new Error(String(response.status));
      status("saved");
    } catch {
      lastSaved = ""; // tried again at the next settle
    }
  }

  simulation.onSettled(schedule);
  // Moving again (a drag, a change): what settles next is saved, not what was.
  store.on("structure", () => clearTimeout(timer));

  if (rerunButton) {
    rerunButton.addEventListener("click", () => {
      if (!graph.nodes.length) return;
      lastSaved = "";
      simulation.rerun();
    });
  }

  const key = () => currentKey(store.view);
  // With ?bench=1 (like perf.js): what the page draws, for tests to compare with what the
  // server stored.
  if (bench) {
    window.graphloomLayouts = {
      key,
      positions: () => graph.nodes.map((node, i) => ({ id: node.id, x: graph.pos[2 * i], y: graph.pos[2 * i + 1] })),
    };
  }
  return { arm, release, ready: markReady, key };
}
