// The force layout, computed off the main thread so the page stays responsive while
// thousands of nodes settle (a tick of d3-force at 10k nodes takes longer than a frame).
//
// Protocol (see simulation.js): the page sends {type: "graph"} with positions and links
// as typed arrays whenever the loaded graph changes, {type: "drag"} / {type: "release"}
// while a node is dragged, {type: "pin"} to hold a node where it is (or let it go), and
// {type: "stop"}. A graph sent `frozen` (a restored saved layout, layouts.js) is held as it
// is: no ticks until a drag or the next graph. The worker answers {type: "tick"} with a
// fresh Float32Array of positions (transferred, not copied) after each slice of ticks,
// tagged with the version of the graph it belongs to, and `settled` once it has cooled.
//
// Dragging a node of a big settled graph re-heats only its surroundings (LOCAL_MAX nodes
// within two hops, the nodes just beyond held in place): re-heating all of it would
// reshuffle the whole map for one node and cost a full tick per frame (35 ms at 5,000
// nodes), so the dragged node's neighbours could not follow the pointer smoothly. Its
// ticks name the nodes that may move (`moving`, the dragged node first, and `movingId`,
// new for each local drag): the page draws everything else once and reuses that picture
// while the drag lasts (render.js).

import { forceLink, forceManyBody, forceSimulation, forceX, forceY } from "../../vendor/d3.js";

// Ticks per message while cooling: as many as fit in this budget, so small graphs settle
// in a few messages and big ones still show progress every frame or two.
const SLICE_MS = 14;
// While dragging: one tick per message, a message per frame.
const FRAME_MS = 16;
const LOCAL_DRAG_ABOVE = 1500;
const LOCAL_MAX = 400;

let simulation = null;
let nodes = [];
let links = [];
let adjacency = null;
let version = 0;
let timer = null;
let dragging = -1;
let local = null; // {simulation, proxies, dragged} while a local drag cools
let pinned = new Set(); // indices of nodes held where they are
let localCount = 0; // numbers the local drags (movingId)

// Fewer ticks for big graphs: the layout is rougher but settles in seconds, not tens.
function ticksFor(n) {
  if (n > 4000) return 110;
  if (n > 1500) return 170;
  return 300;
}

function linkForce() {
  return forceLink()
    .distance((link) => 24 + 16 / Math.max(1, link.weight))
    .iterations(1);
}

function build() {
  simulation = forceSimulation()
    .stop()
    .force("link", linkForce())
    .force("charge", forceManyBody().distanceMax(800))
    .force("x", forceX(0).strength(0.04))
    .force("y", forceY(0).strength(0.04));
}

function setGraph(message) {
  version = message.version;
  local = null;
  const pos = message.pos;
  const n = pos.length / 2;
  nodes = new Array(n);
  for (let i = 0; i < n; i++) nodes[i] = { index: i, x: pos[2 * i], y: pos[2 * i + 1] };
  pinned = new Set(message.pinned || []);
  for (const i of pinned) hold(nodes[i]);
  links = [];
  for (let j = 0; j < message.links.length / 2; j++) {
    links.push({ source: message.links[2 * j], target: message.links[2 * j + 1], weight: message.weights[j] });
  }
  adjacency = null;
  if (!simulation) build();
  simulation.nodes(nodes);
  // Barnes-Hut a little coarser for big graphs: a third less work per tick.
  simulation.force("charge").strength(n > 2000 ? -35 : -70).theta(n > 4000 ? 1.1 : 0.9);
  simulation.force("link").links(links);
  simulation.alphaDecay(1 - Math.pow(simulation.alphaMin(), 1 / ticksFor(n)));
  if (dragging >= n) dragging = -1;
  if (message.frozen) {
    // Cooled already: a drag re-heats it as it would a settled layout.
    simulation.alpha(0);
    if (timer !== null) clearTimeout(timer);
    timer = null;
    return;
  }
  simulation.alpha(Math.max(simulation.alpha(), message.alpha));
  schedule(0);
}

function hold(node) {
  if (!node) return;
  node.fx = node.x;
  node.fy = node.y;
}

function pin({ index, pinned: on }) {
  const node = nodes[index];
  if (!node) return;
  if (on) {
    pinned.add(index);
    hold(node);
  } else {
    pinned.delete(index);
    node.fx = null;
    node.fy = null;
    if (simulation && simulation.alpha() < 0.05) simulation.alpha(0.05);
    schedule(0);
  }
}

function neighbours() {
  if (adjacency) return adjacency;
  adjacency = Array.from({ length: nodes.length }, () => []);
  for (const link of links) {
    const s = link.source.index;
    const t = link.target.index;
    adjacency[s].push(t);
    adjacency[t].push(s);
  }
  return adjacency;
}

// A small simulation around `index`: copies of the nodes within two hops (at most
// LOCAL_MAX), the nodes just beyond them pinned where they are, the links among them.
function startLocal(index) {
  const adj = neighbours();
  const members = [index];
  const inside = new Set(members);
  let frontier = [index];
  for (let hop = 0; hop < 2 && members.length < LOCAL_MAX; hop++) {
    const next = [];
    for (const i of frontier) {
      for (const j of adj[i]) {
        if (inside.has(j) || members.length >= LOCAL_MAX) continue;
        inside.add(j);
        members.push(j);
        next.push(j);
      }
    }
    frontier = next;
  }
  const proxyOf = new Map();
  const proxies = [];
  const proxy = (i, pinned) => {
    const node = nodes[i];
    const copy = { ref: i, x: node.x, y: node.y, vx: 0, vy: 0 };
    if (pinned) {
      copy.fx = node.x;
      copy.fy = node.y;
    }
    proxyOf.set(i, copy);
    proxies.push(copy);
    return copy;
  };
  for (const i of members) proxy(i, i !== index && pinned.has(i));
  const localLinks = [];
  for (const i of members) {
    for (const j of adj[i]) {
      if (!proxyOf.has(j)) proxy(j, true);
    }
  }
  for (const link of links) {
    const s = proxyOf.get(link.source.index);
    const t = proxyOf.get(link.target.index);
    if (s && t && (inside.has(s.ref) || inside.has(t.ref))) localLinks.push({ source: s, target: t, weight: link.weight });
  }
  const sim = forceSimulation(proxies)
    .stop()
    .force("link", linkForce().links(localLinks))
    .force("charge", forceManyBody().strength(-35).distanceMax(300))
    .alphaDecay(1 - Math.pow(0.001, 1 / 120));
  localCount += 1;
  local = { simulation: sim, proxies, dragged: proxyOf.get(index), moving: Int32Array.from(members), id: localCount };
}

function post(settled) {
  const pos = new Float32Array(nodes.length * 2);
  for (let i = 0; i < nodes.length; i++) {
    pos[2 * i] = nodes[i].x;
    pos[2 * i + 1] = nodes[i].y;
  }
  const alpha = (local ? local.simulation : simulation).alpha();
  const moving = local && !settled ? local.moving : null;
  self.postMessage({ type: "tick", version, pos, alpha, settled, moving, movingId: moving ? local.id : 0 }, [pos.buffer]);
}

function run() {
  timer = null;
  if (!simulation) return;
  if (local) {
    const sim = local.simulation;
    sim.tick();
    for (const copy of local.proxies) {
      if (copy.fx !== undefined && copy !== local.dragged) continue;
      nodes[copy.ref].x = copy.x;
      nodes[copy.ref].y = copy.y;
      nodes[copy.ref].vx = 0;
      nodes[copy.ref].vy = 0;
    }
    const settled = dragging < 0 && sim.alpha() < sim.alphaMin();
    if (settled) local = null;
    post(settled);
    if (!settled) schedule(FRAME_MS);
    return;
  }
  if (dragging >= 0) {
    simulation.tick();
    post(false);
    schedule(FRAME_MS);
    return;
  }
  const started = performance.now();
  do {
    simulation.tick();
  } while (performance.now() - started < SLICE_MS && simulation.alpha() >= simulation.alphaMin());
  const settled = simulation.alpha() < simulation.alphaMin();
  post(settled);
  if (!settled) schedule(0);
}

function schedule(delay) {
  if (timer === null) timer = setTimeout(run, delay);
}

function drag({ index, x, y }) {
  const node = nodes[index];
  if (!node || !simulation) return;
  if (dragging !== index) {
    dragging = index;
    // A settled big graph: only the surroundings move (see the top of this file).
    const cooled = simulation.alpha() < simulation.alphaMin();
    if (nodes.length > LOCAL_DRAG_ABOVE && cooled && !(local && local.dragged.ref === index)) startLocal(index);
  }
  if (local && local.dragged.ref === index) {
    local.dragged.fx = x;
    local.dragged.fy = y;
    local.simulation.alphaTarget(0.3);
    if (local.simulation.alpha() < 0.3) local.simulation.alpha(0.3);
  } else {
    local = null;
    node.fx = x;
    node.fy = y;
    simulation.alphaTarget(0.25);
    if (simulation.alpha() < 0.25) simulation.alpha(0.25);
  }
  schedule(0);
}

function release({ index }) {
  const node = nodes[index];
  const held = pinned.has(index);
  if (node) {
    node.fx = held ? node.x : null;
    node.fy = held ? node.y : null;
  }
  if (local && local.dragged.ref === index) {
    if (!held) {
      local.dragged.fx = undefined;
      local.dragged.fy = undefined;
    }
    local.simulation.alphaTarget(0);
  }
  dragging = -1;
  if (simulation) simulation.alphaTarget(0);
  schedule(0);
}

self.onmessage = ({ data }) => {
  switch (data.type) {
    case "graph":
      setGraph(data);
      break;
    case "drag":
      drag(data);
      break;
    case "release":
      release(data);
      break;
    case "pin":
      pin(data);
      break;
    case "stop":
      if (timer !== null) clearTimeout(timer);
      timer = null;
      if (simulation) simulation.stop();
      simulation = null;
      local = null;
      nodes = [];
      break;
    default:
      break;
  }
};
