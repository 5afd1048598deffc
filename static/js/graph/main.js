// The explorer page: wires the modules together and holds the few flows that span them —
// loading hubs, expanding a neighbourhood (and connecting it to what is loaded), focusing
// an entity, showing a path, refreshing after a curation action, and replaying the state
// read from the URL. Each module does one thing; this one decides the order.

import { initApi } from "./api.js";
import { initColours, initLegend } from "./colours.js";
import { initCommunityMap, MEMBERS, withGhosts } from "./communitymap.js";
import { initContextMenu } from "./contextmenu.js";
import { initEdgeCard } from "./edgecard.js";
import { initExport } from "./export.js";
import { initFilters } from "./filters.js";
import { initInteractions } from "./interactions.js";
import { initKeyboard } from "./keyboard.js";
import { initLayouts, viewKey } from "./layouts.js";
import { initMinimap } from "./minimap.js";
import { initNodeList } from "./nodelist.js";
import { initPanels } from "./panels.js";
import { initPathfinder } from "./pathfinder.js";
import { initPerf } from "./perf.js";
import { initRenderer } from "./render.js";
import { initSearch } from "./search.js";
import { initSimulation } from "./simulation.js";
import { initUrlState, readState } from "./state.js";
import { initStats } from "./stats.js";
import { createStore } from "./store.js";
import { zoomIdentity } from "../../vendor/d3.js";

// Nodes an expansion adds at most (the API returns the nearest, best-connected first).
const NEIGHBOURS = 150;
// While the first layout runs and nobody has moved the view, keep it fitted this often.
const FOLLOW_MS = 400;

export function initExplorer(root) {
  const byId = (id) => document.getElementById(id);
  const d = root.dataset;
  const config = {
    workspace: d.workspace,
    api: d.api,
    maxIds: Number(d.maxIds),
    entityPanelUrl: d.entityPanelUrl,
    relationPanelUrl: d.relationPanelUrl,
  };
  const initial = readState();
  const defaultHubs = Number(d.defaultHubs) || 150;
  const api = initApi(config);
  const store = createStore();
  const colours = initColours(store);
  const canvas = byId("graph-canvas");
  const statusLine = byId("graph-status");
  let message = "";

  function say(text) {
    message = text;
    report();
  }

  function report() {
    const { nodes, edges, visibleCount } = store.graph;
    const hidden = nodes.length - visibleCount;
    const counts = nodes.length
      ? `${nodes.length.toLocaleString()} nodes, ${edges.length.toLocaleString()} edges loaded${hidden ? ` (${hidden.toLocaleString()} filtered out)` : ""}`
      : "Nothing loaded.";
    statusLine.textContent = message ? `${counts} · ${message}` : counts;
  }

  // Colours follow the server's type order, so the filters go first.
  const filters = initFilters({
    form: byId("filters"),
    store,
    colours,
    onServerFilters: () => refreshServerMatch(),
  });
  const renderer = initRenderer({ canvas, store, colours });
  const simulation = initSimulation({
    workerUrl: d.workerUrl,
    store,
    canvas,
    onError: (text) => say(`The layout stopped: ${text}`),
  });
  // Layouts that persist (layouts.js): a view's saved layout restored as it loads, a
  // settled one saved.
  const layouts = initLayouts({
    root,
    apiBase: config.api,
    store,
    simulation,
    canvas,
    canSave: d.canSaveLayout === "true",
    remember: byId("layout-remember"),
    rerunButton: byId("layout-rerun"),
    bench: initial.bench,
  });
  let panels = null;
  let menu = null;
  const edgeCard = initEdgeCard({ card: byId("graph-edge-card"), store, api });
  const interactions = initInteractions({
    canvas,
    tooltip: byId("graph-tooltip"),
    store,
    renderer,
    simulation,
    onNode: (id) => openNode(id),
    onEdge: (id) => id > 0 && panels.openRelation(id),
    onBackground: () => store.setHovered(-1),
    onExpand: (id) => expand(id),
    onEdgeHover: (index, sx, sy) => edgeCard.hover(index >= 0 && store.graph.edges[index].id < 0 ? -1 : index, sx, sy),
    onMenu: (target) => openMenu(target),
    menuOpen: () => !byId("graph-menu").hidden,
  });
  panels = initPanels({
    panel: byId("panel"),
    api,
    store,
    canvas,
    onEntityShown: (id, state, { quiet }) => {
      if (store.has(id)) {
        if (!quiet) reveal(id);
      } else if (state === "active" && communityMap.place().view !== "map") {
        // (On the community map a panel is read without loading its entity: a panel asked
        // for before the map was opened must not take the view away from it.)
        expand(id).then((ok) => ok && !quiet && reveal(id));
      }
    },
    onExpand: (id) => expand(id),
  });
  initLegend({ list: byId("legend"), radios: document.querySelectorAll("input[name=colour]"), store, colours });
  initSearch({
    input: byId("graph-search"),
    listbox: byId("graph-search-options"),
    api,
    onPick: (item) => focusEntity(item.id),
  });
  const pathfinder = initPathfinder({
    maxHops: Number(d.maxPathHops),
    form: byId("path-form"),
    fromInput: byId("path-from"),
    fromList: byId("path-from-options"),
    toInput: byId("path-to"),
    toList: byId("path-to-options"),
    clearButton: byId("path-clear"),
    result: byId("path-result"),
    api,
    onPath: showPath,
    onClear: () => store.setPath(null),
    onStep: (id) => focusEntity(id),
  });
  initExport({ container: byId("export-block"), store, renderer, workspace: config.workspace });
  initNodeList({
    details: byId("node-list"),
    list: byId("node-list-items"),
    count: byId("node-count"),
    total: byId("node-total"),
    store,
    renderer,
    simulation,
    interactions,
    onOpen: (id) => {
      if (communityMap.ghostKey(id)) return openNode(id);
      const index = store.indexOf(id);
      if (index !== undefined) reveal(id);
      panels.openEntity(id);
    },
    onMenu: (target) => openMenu(target),
  });
  menu = initContextMenu({
    menu: byId("graph-menu"),
    store,
    actions: {
      openEntity: (id) => {
        reveal(id);
        return panels.openEntity(id);
      },
      openRelation: (id) => panels.openRelation(id),
      expand: (id) => expand(id),
      hideNode: (id) => store.hide({ nodes: [id] }),
      hideEdge: (id) => store.hide({ edges: [id] }),
      ask: (ids) => ask(ids.map((id) => store.graph.nodes[store.indexOf(id)].name).join(" ")),
      askEdge: (id) => {
        const edge = store.graph.edges[store.graph.edgeIndex.get(id)];
        ask(`${store.graph.nodes[edge.s].name} ${store.graph.nodes[edge.t].name}`);
      },
      curateEntity: (id) => panels.openEntity(id).then(showCuration),
      curateRelation: (id) => panels.openRelation(id).then(showCuration),
    },
  });
  const urlState = initUrlState({ workspace: config.workspace, store, renderer, interactions, bench: initial.bench });
  // The community map (communitymap.js): a big workspace's entry view, drilled into.
  const communityMap = initCommunityMap({
    root,
    api,
    store,
    workspace: config.workspace,
    urlState,
    elements: {
      canvas: byId("map-canvas"),
      list: byId("map-list-items"),
      listTitle: byId("map-list-title"),
      count: byId("map-count"),
      details: byId("map-list"),
      tooltip: byId("graph-tooltip"),
      status: byId("map-status"),
      toolbar: byId("map-toolbar"),
      breadcrumbNav: byId("map-breadcrumb"),
      menu: byId("graph-menu"),
      mapLink: byId("map-link"),
    },
    onCommunity: (key) => loadCommunity(key),
    onClassic: () => window.location.reload(),
  });

  // A node's click: an entity's panel, or a ghost community's drill.
  function openNode(id) {
    const key = communityMap.ghostKey(id);
    if (key) return communityMap.openCommunity(key);
    return panels.openEntity(id);
  }

  function openMenu(target) {
    const key = target.node !== undefined ? communityMap.ghostKey(target.node) : null;
    if (key) communityMap.ghostMenu(target, key);
    else menu.open(target);
  }

  // A community's members into the graph (replacing what was loaded), its neighbouring
  // communities as ghost nodes; fitted once laid out.
  async function loadCommunity(key) {
    say("Loading the community…");
    try {
      const payload = await api.communityGraph(key, { limit: MEMBERS });
      const armed = await layouts.arm(viewKey({ community: key }));
      store.clear();
      store.view.community = key;
      store.merge(withGhosts(payload));
      store.emit("state");
      if (armed) layouts.release();
      else layouts.ready();
      interactions.fit(undefined, { duration: 0 });
      afterSettle.push(() => interactions.fit(undefined, { duration: 0 }));
      const shown = payload.nodes.length;
      say(payload.truncated ? `the ${shown.toLocaleString()} best-connected of ${Number(payload.count).toLocaleString()} members` : "");
      return payload;
    } catch (error) {
      say(error.message);
      return null;
    }
  }
  initPerf({ enabled: initial.bench, store, renderer, simulation, interactions });

  let reportFrame = 0;
  const scheduleReport = () => {
    if (!reportFrame) reportFrame = requestAnimationFrame(() => {
      reportFrame = 0;
      report();
    });
  };
  store.on("structure", scheduleReport);
  store.on("visibility", scheduleReport);

  // --- the search box's matches, the hidden nodes ------------------------------------------------

  const searchInput = byId("graph-search");
  const matchLine = byId("graph-search-matches");
  const showHidden = byId("show-hidden");
  searchInput.addEventListener("input", () => store.setSearch(searchInput.value));
  let matchFrame = 0;
  function reportMatches() {
    matchFrame = 0;
    const count = store.view.matches.length;
    const text = store.view.search ? `${count.toLocaleString()} loaded node${count === 1 ? "" : "s"} match${count === 1 ? "es" : ""}` : "";
    if (matchLine.textContent !== text) matchLine.textContent = text;
    matchLine.dataset.count = String(count);
    const hidden = store.view.hidden.size + store.view.hiddenEdges.size;
    showHidden.hidden = !hidden;
    showHidden.textContent = `Show ${hidden} hidden`;
  }
  for (const name of ["structure", "visibility", "view"]) {
    store.on(name, () => {
      if (!matchFrame) matchFrame = requestAnimationFrame(reportMatches);
    });
  }
  showHidden.addEventListener("click", () => {
    store.unhide();
    canvas.focus();
  });

  // "Find passages in Ask": the Ask box's own form, so its answer lands in the side panel.
  function ask(text) {
    const input = byId("graph-ask");
    input.value = text.slice(0, Number(input.maxLength) > 0 ? input.maxLength : 2000);
    // Through its own button, as a person would: htmx answers the form's submission.
    input.form.querySelector("button[type=submit]").click();
  }

  // "Curate": the panel just opened, scrolled to its curation tools (editors only).
  function showCuration() {
    const tools = byId("panel").querySelector(".curation");
    if (tools) tools.scrollIntoView({ block: "start" });
    else say("Curation needs the editor role in this workspace.");
  }

  // --- following the layout until someone takes the view ------------------------------------

  let following = !initial.z;
  let lastFollow = 0;
  let userMoved = false;
  canvas.addEventListener("wheel", () => (userMoved = true), { passive: true });
  canvas.addEventListener("pointerdown", () => (userMoved = true));
  canvas.addEventListener("keydown", () => (userMoved = true));
  store.on("positions", () => {
    if (!following || userMoved) return;
    const now = performance.now();
    if (now - lastFollow < FOLLOW_MS) return;
    lastFollow = now;
    interactions.fit(undefined, { duration: 0 });
  });
  // Finding your way: neighbours from the keyboard, "Fit selection", the minimap.
  initKeyboard({
    canvas,
    announcer: byId("graph-announce"),
    fitButton: byId("fit-selection"),
    store,
    renderer,
    interactions,
    onOpen: (id) => openNode(id),
    onMove: () => (userMoved = true),
  });
  initMinimap({
    container: byId("graph-minimap"),
    canvas: byId("graph-minimap-canvas"),
    toggle: byId("minimap-toggle"),
    store,
    renderer,
    colours,
    interactions,
    onMove: () => (userMoved = true),
  });
  const afterSettle = [];
  simulation.onSettled(() => {
    if (following && !userMoved) interactions.fit(undefined, { duration: 0 });
    following = false;
    for (const callback of afterSettle.splice(0)) callback();
  });

  // --- flows ------------------------------------------------------------------------------------

  function serverOnly(filters) {
    return { source: filters.source, after: filters.after, before: filters.before };
  }

  const hasServerFilter = () => {
    const f = store.view.filters;
    return Boolean(f.source || f.after || f.before);
  };

  // Which loaded nodes match the source and date filters (only the server knows).
  async function refreshServerMatch() {
    if (!hasServerFilter()) {
      store.setServerMatch(null);
      return;
    }
    try {
      const payload = await api.bulk(store.ids(), { filters: serverOnly(store.view.filters), edges: false });
      store.setServerMatch(payload.nodes.map((n) => n.id));
    } catch (error) {
      say(error.message);
    }
  }

  async function matchNew(added) {
    if (!hasServerFilter() || !added.length || !store.view.serverMatch) return;
    const payload = await api.bulk(added, { filters: serverOnly(store.view.filters), edges: false });
    store.setServerMatch([...store.view.serverMatch, ...payload.nodes.map((n) => n.id)]);
  }

  // The edges between newly added nodes and those loaded before.
  async function connect(added) {
    if (!added.length) return;
    const all = store.ids();
    if (all.length === added.length) return;
    const payload = all.length <= api.maxIds ? await api.subgraph(all) : await api.bulk(all, { touching: added });
    store.merge(payload);
  }

  async function loadHubs(count) {
    say("Loading hubs…");
    try {
      const payload = await api.hubs(count, store.view.filters);
      const before = store.graph.nodes.length;
      const { addedNodes } = store.merge(payload);
      store.view.hubs = Math.max(store.view.hubs, count);
      store.emit("state");
      if (before) await connect(addedNodes);
      await matchNew(addedNodes);
      say(payload.truncated ? `the ${payload.nodes.length.toLocaleString()} best-connected of ${payload.count.toLocaleString()} entities` : "");
    } catch (error) {
      say(error.message);
    }
  }

  async function expand(id) {
    // A ghost (a neighbouring community) is not expanded: it is drilled into.
    if (communityMap.ghostKey(id)) return openNode(id) && false;
    say("Loading the neighbourhood…");
    try {
      const payload = await api.neighborhood(id, { limit: NEIGHBOURS });
      if (!payload.nodes.length) {
        say("That entity is no longer in the graph (merged or deleted).");
        return false;
      }
      const { addedNodes } = store.merge(payload, { near: store.has(id) ? id : undefined });
      store.addSeed(id);
      await connect(addedNodes);
      await matchNew(addedNodes);
      const count = addedNodes.length;
      say(`${count} new node${count === 1 ? "" : "s"}${payload.truncated ? ` (the ${NEIGHBOURS} nearest)` : ""}`);
      return true;
    } catch (error) {
      say(error.message);
      return false;
    }
  }

  // Centre a node unless it is already comfortably on screen.
  function reveal(id) {
    const index = store.indexOf(id);
    if (index === undefined) return;
    const [x, y] = renderer.screenOf(index);
    const { width, height } = renderer.size();
    const margin = 40;
    if (x < margin || y < margin || x > width - margin || y > height - margin) interactions.centreOn(index);
  }

  async function focusEntity(id, { open = true, focusPanel = true, centre = true } = {}) {
    const loaded = store.has(id) || (await expand(id));
    if (!loaded) return;
    if (centre) {
      interactions.centreOn(store.indexOf(id));
      // A fresh expansion is still moving: centre again once it settles.
      if (canvas.dataset.layout === "running") afterSettle.push(() => store.has(id) && interactions.centreOn(store.indexOf(id)));
    }
    if (open) await panels.openEntity(id, { focus: focusPanel, quiet: !centre });
    else store.select(id);
  }

  async function showPath(payload, ends) {
    if (!payload) {
      store.setPath(null);
      return;
    }
    const { addedNodes } = store.merge(payload);
    await connect(addedNodes);
    await matchNew(addedNodes);
    store.setPath({
      nodes: new Set(payload.nodes.map((n) => n.id)),
      edges: new Set(payload.edges.map((e) => e.id)),
      ends,
    });
    const fitPath = () => {
      const indices = payload.nodes.map((n) => store.indexOf(n.id)).filter((i) => i !== undefined);
      interactions.fit(indices, { duration: 300 });
    };
    fitPath();
    if (canvas.dataset.layout === "running") afterSettle.push(fitPath);
    say(`a path of ${payload.length} step${payload.length === 1 ? "" : "s"} shown`);
  }

  // After a curation action (explorer/curation_views.py answers with this htmx trigger):
  // drop what is gone, re-read what is loaded, and load around the entity it concerned.
  async function graphChanged(detail) {
    const removed = (detail.removed || []).map(Number).filter(Boolean);
    if (removed.length) store.remove(removed);
    try {
      const ids = store.ids();
      if (ids.length) {
        const payload = ids.length <= api.maxIds ? await api.subgraph(ids) : await api.bulk(ids);
        store.sync(payload, ids);
      }
      const entity = Number(detail.entity);
      if (entity) {
        const payload = await api.neighborhood(entity, { limit: NEIGHBOURS });
        if (payload.nodes.length) {
          const { addedNodes } = store.merge(payload, { near: store.has(entity) ? entity : undefined });
          await connect(addedNodes);
          await matchNew(addedNodes);
        }
      }
      say("Updated after the change.");
    } catch (error) {
      say(error.message);
    }
  }
  document.body.addEventListener("graphloom:graph-changed", (event) => graphChanged(event.detail || {}));

  // The Ask box's passages (templates/explorer/ask/panel.html) offer their entities: load
  // them and highlight them in place, drawn like a path (no ends: the URL keeps them as seeds).
  async function showEntities(ids) {
    say("Loading the answer's entities…");
    try {
      const payload = await api.subgraph(ids.slice(0, api.maxIds));
      const { addedNodes } = store.merge(payload);
      await connect(addedNodes);
      await matchNew(addedNodes);
      for (const node of payload.nodes) store.addSeed(node.id);
      store.setPath({
        nodes: new Set(payload.nodes.map((n) => n.id)),
        edges: new Set(payload.edges.map((e) => e.id)),
        ends: null,
      });
      const fitShown = () => {
        const indices = payload.nodes.map((n) => store.indexOf(n.id)).filter((i) => i !== undefined);
        interactions.fit(indices, { duration: 300 });
      };
      fitShown();
      if (canvas.dataset.layout === "running") afterSettle.push(fitShown);
      say(`${payload.nodes.length} entities of the answer highlighted`);
    } catch (error) {
      say(error.message);
    }
  }
  byId("panel").addEventListener("click", (event) => {
    const button = event.target.closest("[data-show-seeds]");
    if (!button) return;
    const ids = button.dataset.showSeeds.split(",").map(Number).filter(Boolean);
    if (ids.length) showEntities(ids);
  });

  // --- controls --------------------------------------------------------------------------------

  byId("load-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const count = Math.floor(Number(byId("hub-count").value));
    if (count > 0) loadHubs(count);
  });
  byId("clear-graph").addEventListener("click", () => {
    store.clear();
    say("");
  });
  root.querySelector(".stage-toolbar").addEventListener("click", (event) => {
    const button = event.target.closest("[data-zoom]");
    if (!button) return;
    userMoved = true;
    if (button.dataset.zoom === "in") interactions.zoomBy(1.5);
    else if (button.dataset.zoom === "out") interactions.zoomBy(1 / 1.5);
    else interactions.fit();
  });

  initStats({
    counts: byId("stats-counts"),
    types: byId("stats-types"),
    hubs: byId("stats-hubs"),
    sources: byId("stats-sources"),
    api,
    colours,
    onHub: (id) => focusEntity(id),
    onSource: (id) => {
      byId("filter-block").open = true;
      filters.setSource(id);
    },
  }).catch((error) => {
    const p = document.createElement("p");
    p.className = "errors";
    p.textContent = `Statistics unavailable: ${error.message}`;
    byId("stats").replaceChildren(p);
  });

  // --- replaying the URL ------------------------------------------------------------------------

  async function restore() {
    const place = communityMap.initialPlace(initial);
    if (place.view === "map") {
      urlState.enable();
      await communityMap.start(place);
      root.dataset.ready = "true";
      return;
    }
    if (initial.colour !== "type") store.setColour(initial.colour);
    store.setFilters(initial.filters);
    filters.write(initial.filters);
    const f = initial.filters;
    // Filters in force are shown, so nobody wonders where the rest of the graph went.
    if (f.types.length || f.rtypes.length || f.source || f.after || f.before || f.minw || f.mindeg) {
      byId("filter-block").open = true;
    }
    const hubs = place.view === "community" ? 0 : initial.hubs === null ? defaultHubs : initial.hubs;
    byId("hub-count").value = String(hubs || defaultHubs);
    const community = place.view === "community" ? place.c : null;
    await layouts.arm(viewKey({ hubs, community, seeds: initial.seeds, filters: initial.filters, path: initial.path }));
    if (place.view === "community") await communityMap.start(place);
    if (hubs > 0) await loadHubs(hubs);
    for (const id of initial.seeds) await expand(id);
    if (hasServerFilter()) await refreshServerMatch();
    if (initial.path) await pathfinder.find(initial.path[0], initial.path[1]);
    if (initial.z) {
      interactions.zoomTo(zoomIdentity.translate(initial.z.x, initial.z.y).scale(initial.z.k), { duration: 0 });
    } else if (!initial.path) {
      interactions.fit(undefined, { duration: 0 });
    }
    if (initial.focus) await focusEntity(initial.focus, { focusPanel: false, centre: !initial.z && !initial.path });
    else if (initial.edge) await panels.openRelation(initial.edge, { focus: false, quiet: true });
    layouts.release();
    urlState.enable();
    root.dataset.ready = "true";
  }

  restore();
  return { store, api, renderer, interactions, panels };
}

const root = document.getElementById("explorer");
if (root) initExplorer(root);
