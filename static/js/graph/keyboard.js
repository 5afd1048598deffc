// Finding your way from the keyboard (the canvas focused) and "Fit selection":
//   ] / [        the next / previous loaded neighbour of the node the cycle started from,
//                in a stable order (the strongest link first: the summed weight of the
//                relations between the two, then the neighbour's degree, then its name);
//                with nothing selected, the best-connected node in view
//   Alt+Arrow    the neighbour lying most in that direction on screen
//   Backspace    back to the previously selected node
//   Enter        the selected node's panel
//   F            fit the selection: the selected node and its loaded neighbours, else the
//                path shown, else the search's matches, else everything (the toolbar's
//                "Fit selection" button does the same; "Fit" and 0 fit everything)
// A selection moved here keeps the node on screen (centred when it was off screen) and is
// announced in a polite live region ("Selected Paris (location), 2 of 3 neighbours of
// Acme"); the panel follows only on Enter, so walking the graph does not fetch a panel per
// step. The keys are the canvas's own: typing in a field never reaches them. Ghost nodes
// (a drilled community's neighbouring communities) are not entities and are never stepped to.

import { zoomIdentity } from "../../vendor/d3.js";

const HISTORY = 50;
const MARGIN = 40; // screen pixels: closer to the edge than this counts as off screen
const DIRECTIONS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

export function initKeyboard({ canvas, announcer, fitButton, store, renderer, interactions, onOpen, onMove }) {
  const graph = store.graph;
  const history = []; // ids selected before, most recent last
  let previous = store.view.selected;
  let returning = false;
  let cycle = null; // {anchor, ids, at}: the neighbours ] and [ step through

  store.on("view", () => {
    const current = store.view.selected;
    if (current === previous) return;
    if (previous !== null && current !== null && !returning) {
      history.push(previous);
      if (history.length > HISTORY) history.shift();
    }
    previous = current;
  });

  function say(text) {
    // Emptied first so that the same words twice are announced twice.
    announcer.textContent = "";
    requestAnimationFrame(() => (announcer.textContent = text));
  }

  function visibleIndexOf(id) {
    const index = id === null ? undefined : graph.index.get(id);
    return index !== undefined && graph.nodeVisible[index] ? index : undefined;
  }

  // The loaded, visible entity neighbours of node `index`, strongest link first (the summed
  // weight of the visible edges between the two), then best-connected, then by name: an
  // order that does not move with the layout, so ] and [ always walk the same ring.
  function neighbours(index) {
    const strength = new Map(); // neighbour index -> summed weight of the links
    for (let j = 0; j < graph.edges.length; j++) {
      if (!graph.edgeVisible[j]) continue;
      const edge = graph.edges[j];
      const other = edge.s === index ? edge.t : edge.t === index ? edge.s : -1;
      if (other < 0 || other === index || !graph.nodeVisible[other] || graph.nodes[other].ghost) continue;
      strength.set(other, (strength.get(other) || 0) + edge.weight);
    }
    return [...strength.keys()].sort((a, b) => {
      const na = graph.nodes[a];
      const nb = graph.nodes[b];
      return (
        strength.get(b) - strength.get(a) ||
        nb.degree - na.degree ||
        (na.name < nb.name ? -1 : na.name > nb.name ? 1 : a - b)
      );
    });
  }

  // Keep node `index` on screen: centre it (at the same zoom) when it is off screen.
  function keepOnScreen(index) {
    const [x, y] = renderer.screenOf(index);
    const { width, height } = renderer.size();
    if (x >= MARGIN && y >= MARGIN && x <= width - MARGIN && y <= height - MARGIN) return;
    const k = renderer.transform.k;
    const wx = graph.pos[2 * index];
    const wy = graph.pos[2 * index + 1];
    interactions.zoomTo(zoomIdentity.translate(width / 2 - k * wx, height / 2 - k * wy).scale(k), { duration: 250 });
  }

  function ownNeighbours(index) {
    const links = neighbours(index).length;
    return `${links} loaded neighbour${links === 1 ? "" : "s"}`;
  }

  // "Selected Paris (location), 2 of 3 neighbours of Acme", or with no context the number
  // of the node's own loaded neighbours.
  function describe(index, context) {
    const node = graph.nodes[index];
    if (!context) context = ownNeighbours(index);
    return `Selected ${node.name} (${node.type}), ${context}`;
  }

  function selectIndex(index, context) {
    store.select(graph.nodes[index].id);
    keepOnScreen(index);
    say(describe(index, context));
  }

  // The best-connected visible node on screen (where ] starts with nothing selected).
  function bestInView() {
    const { width, height } = renderer.size();
    let best = -1;
    for (let i = 0; i < graph.nodes.length; i++) {
      if (!graph.nodeVisible[i] || graph.nodes[i].ghost) continue;
      const [x, y] = renderer.screenOf(i);
      if (x < 0 || y < 0 || x > width || y > height) continue;
      if (best < 0 || graph.nodes[i].degree > graph.nodes[best].degree) best = i;
    }
    return best;
  }

  function step(delta) {
    const selected = visibleIndexOf(store.view.selected);
    if (selected === undefined) {
      const best = bestInView();
      if (best < 0) say("No node in view.");
      else selectIndex(best, `the best-connected node in view, ${ownNeighbours(best)}`);
      return;
    }
    const continuing = cycle && cycle.ids[cycle.at] === store.view.selected && graph.index.has(cycle.anchor);
    if (!continuing) {
      const ids = neighbours(selected).map((i) => graph.nodes[i].id);
      cycle = { anchor: store.view.selected, ids, at: delta > 0 ? -1 : ids.length };
    }
    if (!cycle.ids.length) {
      say(`${graph.nodes[selected].name} has no loaded neighbours.`);
      return;
    }
    // (a neighbour hidden by a filter since the cycle began is stepped over)
    let index;
    for (let tries = 0; index === undefined && tries < cycle.ids.length; tries++) {
      cycle.at = (cycle.at + delta + cycle.ids.length) % cycle.ids.length;
      index = visibleIndexOf(cycle.ids[cycle.at]);
    }
    if (index === undefined) {
      say(`${graph.nodes[selected].name} has no loaded neighbours.`);
      return;
    }
    const anchor = graph.nodes[graph.index.get(cycle.anchor)].name;
    selectIndex(index, `${cycle.at + 1} of ${cycle.ids.length} neighbours of ${anchor}`);
  }

  // The neighbour most in direction (dx, dy) on screen: the best aligned within 60
  // degrees, the nearer of two equally aligned; else none.
  function towards(dx, dy) {
    const selected = visibleIndexOf(store.view.selected);
    if (selected === undefined) {
      say("Select a node first.");
      return;
    }
    const [sx, sy] = renderer.screenOf(selected);
    let best = -1;
    let bestScore = -Infinity;
    for (const i of neighbours(selected)) {
      const [x, y] = renderer.screenOf(i);
      const distance = Math.hypot(x - sx, y - sy);
      if (distance < 0.5) continue;
      const cos = ((x - sx) * dx + (y - sy) * dy) / distance;
      if (cos < 0.5) continue;
      const score = cos - distance / 1e6;
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    if (best < 0) say(`No loaded neighbour of ${graph.nodes[selected].name} that way.`);
    else selectIndex(best, `a neighbour of ${graph.nodes[selected].name}`);
  }

  function back() {
    while (history.length) {
      const id = history.pop();
      const index = visibleIndexOf(id);
      if (index === undefined) continue;
      returning = true;
      try {
        selectIndex(index, `back, ${ownNeighbours(index)}`);
      } finally {
        returning = false;
      }
      return;
    }
    say("No earlier selection.");
  }

  // What "Fit selection" fits: {indices (undefined: everything), what (words for it)}.
  function fitted() {
    const { view } = store;
    const selected = visibleIndexOf(view.selected);
    if (selected !== undefined) {
      const around = neighbours(selected);
      return { indices: [selected, ...around], what: `${graph.nodes[selected].name} and ${ownNeighbours(selected)}` };
    }
    if (view.path) {
      const onPath = [...view.path.nodes].map((id) => visibleIndexOf(id)).filter((i) => i !== undefined);
      if (onPath.length) return { indices: onPath, what: `the path's ${onPath.length} nodes` };
    }
    if (view.matches.length) {
      const n = view.matches.length;
      return { indices: view.matches, what: `the ${n} search match${n === 1 ? "" : "es"}` };
    }
    return { indices: undefined, what: "everything loaded" };
  }

  function selectionIndices() {
    return fitted().indices;
  }

  function fitSelection() {
    if (onMove) onMove();
    const { indices, what } = fitted();
    interactions.fit(indices);
    say(`Fitted ${what}.`);
  }

  fitButton.addEventListener("click", fitSelection);

  canvas.addEventListener("keydown", (event) => {
    // (only the canvas's own keys: not a key typed into a field that bubbled here)
    if (event.target !== canvas || event.ctrlKey || event.metaKey || event.isComposing) return;
    const direction = DIRECTIONS[event.key];
    if (event.altKey) {
      if (!direction) return;
      towards(direction[0], direction[1]);
    } else if (event.key === "]" || event.key === "[") {
      step(event.key === "]" ? 1 : -1);
    } else if (event.key === "Backspace") {
      back();
    } else if (event.key === "Enter") {
      if (visibleIndexOf(store.view.selected) === undefined) return;
      onOpen(store.view.selected);
    } else if (event.key === "f" || event.key === "F") {
      fitSelection();
    } else {
      return;
    }
    event.preventDefault();
  });

  return { fitSelection, selectionIndices };
}
