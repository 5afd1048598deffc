// The community map: the entry view of a big workspace. Each community is a circle (area
// after its size), the relations between two communities a line (width and opacity after
// their weight), drawn on its own canvas (#map-canvas) over the graph's. A click on a
// community drills in: into its sub-communities when it has some, else into its members,
// loaded into the ordinary explorer with one grey "ghost" node per neighbouring community
// (a click on a ghost drills into that community). The breadcrumb and the browser's Back go
// back up; every level has its URL (view=map, c=3, c=3.2), so a reload lands at the same
// place.
//
// The layout is deterministic: the same map gives the same picture every time (fixed
// starting points on a sunflower spiral by rank, a fixed number of d3-force ticks run at
// once). Community labels are made of entity names (hostile text): drawn with fillText
// and put in the DOM with textContent only.

import { ancestry, initBreadcrumb } from "./breadcrumb.js";
import { PALETTE } from "./colours.js";
import { readState } from "./state.js";
import {
  forceCollide,
  forceLink,
  forceManyBody,
  forceSimulation,
  forceX,
  forceY,
  select,
  zoom,
  zoomIdentity,
} from "../../vendor/d3.js";

const GOLDEN = Math.PI * (3 - Math.sqrt(5));
// Ticks of the map's layout, run at once (at most 300 communities: a few milliseconds each).
const TICKS = 300;
// While the server computes the map, ask again this often.
const POLL_MS = 3000;
// Members of a drilled community loaded at most (the API's default).
export const MEMBERS = 5000;
// Circle radii in world units: the smallest community and the largest.
const MIN_R = 7;
const MAX_R = 60;
const LABEL_CHARS = 30;
// The node type of the ghost community nodes (a neutral grey where the colours know it).
export const GHOST_TYPE = "community";

export function communityName(community) {
  return String((community && (community.title || community.label)) || "");
}

function shorten(text, max = LABEL_CHARS) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// Circles and their settled positions for a map payload: [{community, x, y, r}].
export function layoutMap(communities, links) {
  const largest = Math.max(1, ...communities.map((c) => c.size || 0));
  const nodes = communities.map((community, i) => {
    const radius = 18 * Math.sqrt(0.5 + i);
    return {
      key: community.key,
      community,
      r: MIN_R + (MAX_R - MIN_R) * Math.sqrt((community.size || 0) / largest),
      x: radius * Math.cos(i * GOLDEN),
      y: radius * Math.sin(i * GOLDEN),
    };
  });
  const known = new Set(nodes.map((n) => n.key));
  const heaviest = Math.max(1e-9, ...links.map((l) => l.weight || 0));
  const edges = links
    .filter((l) => known.has(l.source) && known.has(l.target))
    .map((l) => ({ source: l.source, target: l.target, w: (l.weight || 0) / heaviest }));
  const simulation = forceSimulation(nodes)
    .force("link", forceLink(edges).id((n) => n.key).distance((l) => l.source.r + l.target.r + 40).strength((l) => 0.05 + 0.4 * l.w))
    .force("charge", forceManyBody().strength((n) => -40 - 6 * n.r))
    .force("collide", forceCollide((n) => n.r + 22).iterations(2))
    .force("x", forceX(0).strength(0.05))
    .force("y", forceY(0).strength(0.05))
    .stop();
  simulation.tick(TICKS);
  const index = new Map(nodes.map((n, i) => [n.key, i]));
  return {
    nodes,
    links: edges.map((e) => ({ s: index.get(e.source.key), t: index.get(e.target.key), w: e.w })),
  };
}

// A drilled community's payload with its neighbours as ghost nodes (negative ids) and its
// stubs as ghost edges from the members to them (weight: the relations they stand for).
export function withGhosts(payload) {
  const neighbours = payload.neighbours || [];
  const ghostOf = new Map(neighbours.map((n, i) => [n.key, -(i + 1)]));
  const ghosts = neighbours.map((n, i) => ({
    id: -(i + 1),
    name: communityName(n),
    type: GHOST_TYPE,
    degree: 0,
    mention_count: 0,
    community: null,
    ghost: true,
    communityKey: n.key,
  }));
  const members = new Set((payload.nodes || []).map((n) => n.id));
  const stubs = [];
  for (const stub of payload.stubs || []) {
    const ghost = ghostOf.get(stub.community);
    if (ghost === undefined || !members.has(stub.node)) continue;
    stubs.push({ id: -(stubs.length + 1), source: stub.node, target: ghost, type: "links to community", weight: stub.count });
    // Drawn the larger the more relations its stubs stand for.
    ghosts[-ghost - 1].degree += Number(stub.count) || 0;
  }
  return { ...payload, nodes: [...(payload.nodes || []), ...ghosts], edges: [...(payload.edges || []), ...stubs] };
}

// Where a URL puts the explorer: {view: "map", c} (a level of the map), {view: "community",
// c} (a community's members) or {view: "graph"} (the classic hubs view).
export function placeOf(state, { entityCount, mapAbove }) {
  if (state.view === "map") return { view: "map", c: state.c };
  if (state.c) return { view: "community", c: state.c };
  if (state.view !== "graph" && state.bare && entityCount > mapAbove) return { view: "map", c: null };
  return { view: "graph" };
}

export function urlOf(place, workspace) {
  const params = new URLSearchParams();
  params.set("ws", workspace);
  if (place.view === "map") params.set("view", "map");
  if (place.c) params.set("c", place.c);
  if (place.view === "community") params.set("hubs", "0");
  if (place.view === "graph") params.set("view", "graph");
  return `${window.location.pathname}?${params.toString()}`;
}

export function initCommunityMap({ root, api, store, workspace, elements, onCommunity, onClassic, urlState }) {
  const { canvas, list, listTitle, count, details, tooltip, status, toolbar, breadcrumbNav, menu, mapLink } = elements;
  const entityCount = Number(root.dataset.entityCount) || 0;
  const mapAbove = Number(root.dataset.mapAbove) || 0;
  const labels = new Map(); // community key -> its name, for the breadcrumb
  const context = canvas.getContext("2d");
  let place = { view: "graph" };
  let picture = null; // {nodes, links} of the level shown
  let transform = zoomIdentity;
  let hovered = -1;
  let poll = 0;
  let generation = 0; // each navigation's number: answers for an older one are dropped

  if (mapLink) mapLink.hidden = !(entityCount > mapAbove);

  const breadcrumb = initBreadcrumb({
    nav: breadcrumbNav,
    onPick: (key) => go({ view: "map", c: key }),
  });

  // --- drawing --------------------------------------------------------------------------------

  function size() {
    return { width: canvas.clientWidth, height: canvas.clientHeight };
  }

  function draw() {
    const ratio = window.devicePixelRatio || 1;
    const { width, height } = size();
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, height);
    if (!picture) return;
    const { nodes, links } = picture;
    context.save();
    context.translate(transform.x, transform.y);
    context.scale(transform.k, transform.k);
    context.strokeStyle = "#7b8499";
    for (const link of links) {
      const a = nodes[link.s];
      const b = nodes[link.t];
      context.globalAlpha = 0.15 + 0.6 * link.w;
      context.lineWidth = (0.6 + 7 * link.w) / Math.sqrt(transform.k);
      context.beginPath();
      context.moveTo(a.x, a.y);
      context.lineTo(b.x, b.y);
      context.stroke();
    }
    context.globalAlpha = 1;
    nodes.forEach((node, i) => {
      context.beginPath();
      context.arc(node.x, node.y, node.r, 0, 2 * Math.PI);
      context.fillStyle = PALETTE[i % PALETTE.length];
      context.fill();
      context.lineWidth = (i === hovered ? 3 : 1.2) / transform.k;
      context.strokeStyle = node.community.has_children ? "#1d2330" : "#ffffff";
      context.stroke();
    });
    context.restore();
    drawLabels(nodes);
  }

  // Labels in screen pixels (readable at any zoom), largest community first, each only
  // where it overlaps no label already drawn (the hovered one always, on top).
  function drawLabels(nodes) {
    context.font = "12px system-ui, sans-serif";
    context.textAlign = "center";
    context.textBaseline = "top";
    context.lineJoin = "round";
    const taken = [];
    const order = nodes.map((_, i) => i);
    if (hovered >= 0) order.splice(order.indexOf(hovered), 1);
    for (const i of order) label(nodes[i], taken, false);
    if (hovered >= 0) label(nodes[hovered], taken, true);
  }

  function label(node, taken, always) {
    const r = node.r * transform.k;
    if (r < 6 && !always) return;
    const text = shorten(communityName(node.community));
    const width = context.measureText(text).width;
    const x = transform.applyX(node.x);
    const y = transform.applyY(node.y) + r + 3;
    const box = [x - width / 2 - 2, y - 1, x + width / 2 + 2, y + 15];
    const clash = taken.some((b) => box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3]);
    if (clash && !always) return;
    taken.push(box);
    context.lineWidth = 3;
    context.strokeStyle = "rgba(255, 255, 255, .9)";
    context.strokeText(text, x, y);
    context.fillStyle = "#1d2330";
    context.fillText(text, x, y);
  }

  let frame = 0;
  function redraw() {
    if (!frame) frame = requestAnimationFrame(() => {
      frame = 0;
      draw();
    });
  }

  new ResizeObserver(() => {
    if (place.view === "map") draw();
  }).observe(canvas);

  // --- pan, zoom, hover, click ----------------------------------------------------------------

  const zoomBehaviour = zoom()
    .scaleExtent([0.05, 20])
    .on("zoom", (event) => {
      transform = event.transform;
      hideTooltip();
      redraw();
    })
    .on("end", placeButtons);
  const selection = select(canvas);
  selection.call(zoomBehaviour).on("dblclick.zoom", null);

  function fitTransform() {
    const { width, height } = size();
    if (!picture || !picture.nodes.length || !width || !height) return zoomIdentity.translate(width / 2, height / 2);
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (const n of picture.nodes) {
      x0 = Math.min(x0, n.x - n.r);
      y0 = Math.min(y0, n.y - n.r);
      x1 = Math.max(x1, n.x + n.r);
      y1 = Math.max(y1, n.y + n.r + 18);
    }
    const k = Math.min(4, 0.9 * Math.min(width / Math.max(1, x1 - x0), height / Math.max(1, y1 - y0)));
    return zoomIdentity.translate(width / 2 - (k * (x0 + x1)) / 2, height / 2 - (k * (y0 + y1)) / 2).scale(k);
  }

  function fit() {
    selection.call(zoomBehaviour.transform, fitTransform());
    placeButtons();
  }

  function hit(sx, sy) {
    if (!picture) return -1;
    const [x, y] = transform.invert([sx, sy]);
    let best = -1;
    // The smallest circle under the point wins (it is drawn over the larger ones near it).
    picture.nodes.forEach((n, i) => {
      const inside = (x - n.x) ** 2 + (y - n.y) ** 2 <= n.r * n.r;
      if (inside && (best < 0 || n.r < picture.nodes[best].r)) best = i;
    });
    return best;
  }

  function pointOf(event) {
    const rect = canvas.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  }

  canvas.addEventListener("click", (event) => {
    const i = hit(...pointOf(event));
    if (i >= 0) drill(picture.nodes[i].community);
  });
  canvas.addEventListener("mousemove", (event) => {
    const [sx, sy] = pointOf(event);
    const i = hit(sx, sy);
    canvas.classList.toggle("over-community", i >= 0);
    if (i !== hovered) {
      hovered = i;
      redraw();
    }
    if (i >= 0) showTooltip(picture.nodes[i].community, sx, sy);
    else hideTooltip();
  });
  canvas.addEventListener("mouseleave", () => {
    hovered = -1;
    hideTooltip();
    redraw();
  });
  canvas.addEventListener("keydown", (event) => {
    const step = 60;
    const moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (moves[event.key]) selection.call(zoomBehaviour.translateBy, moves[event.key][0] / transform.k, moves[event.key][1] / transform.k);
    else if (event.key === "+" || event.key === "=") zoomBy(1.4);
    else if (event.key === "-" || event.key === "_") zoomBy(1 / 1.4);
    else if (event.key === "0") fit();
    else return;
    event.preventDefault();
  });

  function zoomBy(factor) {
    const { width, height } = size();
    selection.call(zoomBehaviour.scaleBy, factor, [width / 2, height / 2]);
  }

  toolbar.addEventListener("click", (event) => {
    const button = event.target.closest("[data-map-zoom]");
    if (!button) return;
    if (button.dataset.mapZoom === "in") zoomBy(1.5);
    else if (button.dataset.mapZoom === "out") zoomBy(1 / 1.5);
    else fit();
  });

  function showTooltip(community, sx, sy) {
    const name = document.createElement("strong");
    name.textContent = communityName(community);
    const meta = document.createElement("span");
    const parts = [` ${Number(community.size || 0).toLocaleString()} entities`];
    if (community.title) parts.push(community.label);
    if (community.has_children) parts.push("sub-communities");
    meta.textContent = parts.join(" · ");
    tooltip.replaceChildren(name, meta);
    tooltip.style.left = `${Math.round(sx + 14)}px`;
    tooltip.style.top = `${Math.round(sy + 10)}px`;
    tooltip.hidden = false;
  }

  function hideTooltip() {
    tooltip.hidden = true;
  }

  // --- the accessible list ------------------------------------------------------------------

  // The list's communities: the map's circles, or in a drill the neighbouring communities
  // (the ghost nodes' way in without a pointer). [{key, label, title?, size, has_children?}]
  let listed = new Map();

  function buildList(communities, title) {
    listTitle.textContent = title;
    count.textContent = String(communities.length);
    listed = new Map(communities.map((c) => [c.key, c]));
    list.replaceChildren(
      ...communities.map((community) => {
        const li = document.createElement("li");
        const button = document.createElement("button");
        button.type = "button";
        button.className = "node-button";
        button.dataset.key = community.key;
        const name = document.createElement("span");
        name.className = "node-name";
        name.textContent = communityName(community);
        const meta = document.createElement("span");
        meta.className = "node-meta";
        meta.textContent = ` ${Number(community.size || 0).toLocaleString()} entities${community.has_children ? ", sub-communities" : ""}`;
        button.append(name, meta);
        li.append(button);
        return li;
      }),
    );
    placeButtons();
  }

  // Each button's circle on the canvas (CSS pixels from its top left), for tests and tools.
  function placeButtons() {
    if (!picture || place.view !== "map") return;
    const byKey = new Map(picture.nodes.map((n) => [n.key, n]));
    for (const button of list.querySelectorAll("button[data-key]")) {
      const node = byKey.get(button.dataset.key);
      if (!node) continue;
      button.dataset.x = String(Math.round(transform.applyX(node.x)));
      button.dataset.y = String(Math.round(transform.applyY(node.y)));
    }
  }

  list.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-key]");
    const community = button ? listed.get(button.dataset.key) : undefined;
    if (!community) return;
    if (place.view === "map") drill(community);
    else openCommunity(community.key);
  });

  // --- levels, drills and the URL --------------------------------------------------------------

  function say(text, state) {
    status.textContent = text;
    canvas.dataset.state = state;
  }

  function showMode(map) {
    root.classList.toggle("map-mode", map);
    canvas.hidden = !map;
    toolbar.hidden = !map;
    // The list: the map's circles (open), or in a drill its neighbours (folded, and there
    // before the members are laid out and fitted: the stage keeps its size).
    details.hidden = place.view === "graph";
    details.open = map;
    if (!map) {
      hideTooltip();
      clearTimeout(poll);
    }
    if (mapLink) mapLink.hidden = map || !(entityCount > mapAbove);
  }

  function remember(community) {
    if (community && community.key) labels.set(community.key, communityName(community) || `Community ${community.key}`);
  }

  // The names of `key` and its ancestors (a reload knows none): each missing one read from
  // the level that lists it (its parent's map; the top level for "3").
  async function trailOf(key) {
    const keys = ancestry(key);
    const asked = new Set();
    for (const k of keys) {
      const parent = k.includes(".") ? k.slice(0, k.lastIndexOf(".")) : null;
      if (labels.has(k) || asked.has(parent)) continue;
      asked.add(parent);
      try {
        const level = await api.communityMap(parent);
        for (const c of level.communities || []) remember(c);
      } catch {
        // an unknown level: named by its key below
      }
    }
    return keys.map((k) => ({ key: k, label: labels.get(k) || `Community ${k}` }));
  }

  async function showLevel(parent, mine) {
    clearTimeout(poll);
    say(picture ? "Loading…" : "Loading the community map…", "loading");
    let level;
    try {
      level = await api.communityMap(parent);
    } catch (error) {
      if (mine !== generation) return;
      picture = null;
      buildList([], "Communities");
      draw();
      say(error.status === 404 ? "That community is no longer on the map." : error.message, "error");
      breadcrumb.show(parent ? [{ key: parent, label: labels.get(parent) || `Community ${parent}` }] : []);
      return;
    }
    if (mine !== generation) return;
    for (const c of level.communities || []) remember(c);
    const communities = level.communities || [];
    if (parent && !communities.length) {
      // No sub-communities (any more): its members instead.
      go({ view: "community", c: parent }, { push: false, replace: true });
      return;
    }
    picture = layoutMap(communities, level.links || []);
    hovered = -1;
    canvas.dataset.level = parent || "top";
    breadcrumb.show(await trailOf(parent));
    if (mine !== generation) return;
    buildList(communities, "Communities");
    fit();
    draw();
    if (!communities.length) {
      if (level.computing) {
        say("Computing the community map…", "computing");
        poll = setTimeout(() => mine === generation && showLevel(parent, mine), POLL_MS);
      } else {
        say("No communities to draw: no entity has relations yet. The classic view lists them.", "empty");
      }
      return;
    }
    const parts = [`${communities.length.toLocaleString()} communities of ${Number(level.entities || 0).toLocaleString()} entities`];
    const others = level.others || {};
    if (others.communities) {
      parts.push(`${Number(others.communities).toLocaleString()} smaller ones (${Number(others.entities || 0).toLocaleString()} entities) not drawn`);
    }
    if (level.stale) parts.push(level.computing ? "out of date: being recomputed" : "out of date");
    say(parts.join(" · "), level.stale ? "stale" : "drawn");
    if (level.stale) canvas.dataset.stale = "true";
    else delete canvas.dataset.stale;
  }

  async function showCommunity(key, mine) {
    const payload = await onCommunity(key);
    if (!payload || mine !== generation) return;
    const neighbours = payload.neighbours || [];
    for (const n of neighbours) if (!labels.has(n.key)) remember(n);
    buildList(neighbours, "Neighbouring communities");
    breadcrumb.show(await trailOf(key));
  }

  // Go to `target` (a place, see placeOf): push: a new history entry (a drill, a crumb);
  // replace: the same entry, corrected; neither: the browser moved (Back, Forward).
  async function go(target, { push = true, replace = false } = {}) {
    const mine = ++generation;
    if (push) window.history.pushState({ communityMap: true }, "", urlOf(target, workspace));
    else if (replace) window.history.replaceState({ communityMap: true }, "", urlOf(target, workspace));
    place = target;
    if (target.view === "map") {
      urlState.suspend(true);
      showMode(true);
      if (store.graph.nodes.length) store.clear();
      await showLevel(target.c, mine);
    } else if (target.view === "community") {
      showMode(false);
      buildList([], "Neighbouring communities");
      urlState.suspend(true);
      await showCommunity(target.c, mine);
      if (mine === generation) urlState.suspend(false);
    } else {
      showMode(false);
      breadcrumb.show(null);
      urlState.suspend(false);
      onClassic();
    }
  }

  // A ghost's community: a top-level one may have sub-communities (its map then; a level
  // without any turns into its entities, see showLevel), a sub-community has none.
  function openCommunity(key) {
    return go({ view: key.includes(".") ? "community" : "map", c: key });
  }

  function drill(community) {
    go({ view: community.has_children ? "map" : "community", c: community.key });
  }

  window.addEventListener("popstate", () => {
    const target = placeOf(readState(), { entityCount, mapAbove });
    if (target.view === "graph" && place.view === "graph") return;
    go(target, { push: false });
  });

  // Anything else that loads entities (search, the hubs form, a path) leaves the map, in a
  // history entry of its own (Back returns to the map).
  store.on("structure", (detail) => {
    if (place.view !== "map" || !detail || !(detail.addedNodes || []).length) return;
    place = { view: "graph" };
    generation++;
    window.history.pushState(null, "", urlOf(place, workspace));
    showMode(false);
    breadcrumb.show(null);
    urlState.suspend(false);
  });

  // A ghost node's context menu: only "Open community" (same menu element and keys as the
  // nodes' own menu, contextmenu.js, which closes it).
  function ghostMenu(target, key) {
    const heading = document.createElement("p");
    heading.className = "graph-menu-title";
    heading.setAttribute("aria-hidden", "true");
    const name = labels.get(key) || `Community ${key}`;
    heading.textContent = shorten(name, 60);
    const item = document.createElement("button");
    item.type = "button";
    item.setAttribute("role", "menuitem");
    item.tabIndex = -1;
    item.textContent = "Open community";
    item.addEventListener("click", () => {
      menu.hidden = true;
      menu.replaceChildren();
      openCommunity(key);
    });
    menu.replaceChildren(heading, item);
    menu.setAttribute("aria-label", `Community: ${name}`);
    menu.dataset.kind = "community";
    menu.dataset.id = key;
    menu.hidden = false;
    menu.style.left = `${Math.max(0, Math.round(Math.min(target.x, window.innerWidth - menu.offsetWidth - 4)))}px`;
    menu.style.top = `${Math.max(0, Math.round(Math.min(target.y, window.innerHeight - menu.offsetHeight - 4)))}px`;
    item.focus();
  }

  // The community key of a ghost node (null for an entity).
  function ghostKey(id) {
    const index = store.indexOf(id);
    if (index === undefined) return null;
    const node = store.graph.nodes[index];
    return node.ghost ? node.communityKey : null;
  }

  return {
    // Where the page's URL puts it (main.js replays the rest of the URL for the graph).
    initialPlace: (state) => placeOf(state, { entityCount, mapAbove }),
    // The first place: the map (its URL written in place when the page opened bare), or a community.
    start(target) {
      place = target;
      const replace = target.view === "map" && readState().view !== "map";
      return go(target, { push: false, replace });
    },
    openCommunity,
    ghostKey,
    ghostMenu,
    place: () => place,
  };
}
