// "Nodes in view": the visible nodes inside the canvas's viewport as a list of buttons,
// because a canvas is unreachable by keyboard and invisible to screen readers. Kept in step
// with the view: recomputed (at most every REFRESH_MS) when the view pans or zooms, the
// layout moves, or the filters or the loaded graph change. Best-connected first, at most
// LIST_MAX buttons, with a count "N in view of M loaded"; the selected node is always
// listed, marked aria-current and scrolled into the list's view. Each button selects and
// reveals its node and opens its panel; Shift+F10 or the context-menu key on a button opens
// that node's context menu. A button's data-x / data-y give the node's position on the
// canvas (CSS pixels from its top left), so a test can also click the canvas itself.
// The buttons are built only while the list is open (thousands of buttons cost); the
// counts are kept either way.

import { idButtonItem } from "./elements.js";

const LIST_MAX = 300;
const REFRESH_MS = 250;

export function initNodeList({ details, list, count, total, store, renderer, simulation, interactions, onOpen, onMenu }) {
  const graph = store.graph;
  let order = []; // visible node indices, best-connected first, then by name
  let orderDirty = true;
  let shown = ""; // the ids listed now, in order, joined
  let timer = 0;
  let last = -Infinity;
  let lastView = "";
  const items = new Map(); // node id -> its <li>, reused while its node is unchanged

  let loaded = 0; // entities loaded (a drilled community's ghost neighbours are not)

  function sortOrder() {
    order = [];
    loaded = 0;
    for (const node of graph.nodes) if (!node.ghost) loaded += 1;
    for (let i = 0; i < graph.nodes.length; i++) if (graph.nodeVisible[i] && !graph.nodes[i].ghost) order.push(i);
    order.sort((a, b) => {
      const na = graph.nodes[a];
      const nb = graph.nodes[b];
      return nb.degree - na.degree || (na.name < nb.name ? -1 : na.name > nb.name ? 1 : a - b);
    });
    orderDirty = false;
  }

  // The nodes inside the viewport (best-connected first, at most LIST_MAX) and how many.
  function inView() {
    if (orderDirty) sortOrder();
    const { width, height } = renderer.size();
    const [x0, y0] = renderer.worldOf(0, 0);
    const [x1, y1] = renderer.worldOf(width, height);
    const pos = graph.pos;
    const listed = [];
    let n = 0;
    for (const i of order) {
      const x = pos[2 * i];
      const y = pos[2 * i + 1];
      if (x < x0 || x > x1 || y < y0 || y > y1) continue;
      n += 1;
      if (listed.length < LIST_MAX) listed.push(i);
    }
    return { listed, n };
  }

  function item(i) {
    const node = graph.nodes[i];
    let li = items.get(node.id);
    if (li && li.node === node) return li;
    const built = idButtonItem({ id: node.id, className: "node-button" });
    const name = document.createElement("span");
    name.className = "node-name";
    name.textContent = node.name;
    const meta = document.createElement("span");
    meta.className = "node-meta";
    meta.textContent = ` ${node.type}, degree ${node.degree}`;
    built.button.append(name, meta);
    li = built.li;
    li.node = node;
    items.set(node.id, li);
    return li;
  }

  // Nodes that stay listed even out of view: the selected one, the one keyboard focus is on.
  function kept(listed) {
    const extra = [];
    const focused = list.contains(document.activeElement) ? Number(document.activeElement.dataset.id) : null;
    for (const id of [store.view.selected, focused]) {
      const i = id === null || Number.isNaN(id) ? undefined : graph.index.get(id);
      if (i !== undefined && graph.nodeVisible[i] && !listed.includes(i) && !extra.includes(i)) extra.push(i);
    }
    return extra;
  }

  function update() {
    timer = 0;
    last = performance.now();
    const { listed, n } = inView();
    count.textContent = n.toLocaleString();
    total.textContent = loaded.toLocaleString();
    if (!details.open) return;
    const all = [...kept(listed), ...listed];
    const ids = all.map((i) => graph.nodes[i].id).join(",");
    if (ids !== shown) {
      shown = ids;
      const focused = list.contains(document.activeElement) ? document.activeElement : null;
      const children = all.map(item);
      if (n > listed.length) {
        const more = document.createElement("li");
        more.className = "node-more";
        more.textContent = `…and ${(n - listed.length).toLocaleString()} more in view: zoom in to list them.`;
        children.push(more);
      }
      list.replaceChildren(...children);
      // (taking a button out of the document takes keyboard focus with it: give it back)
      if (focused && focused.isConnected && document.activeElement !== focused) focused.focus({ preventScroll: true });
      mark();
    }
    place();
  }

  // Refresh soon, at most every REFRESH_MS.
  function schedule() {
    if (timer) return;
    timer = setTimeout(update, Math.max(0, REFRESH_MS - (performance.now() - last)));
  }

  function place() {
    if (!details.open) return;
    for (const button of list.querySelectorAll("button[data-id]")) {
      const i = graph.index.get(Number(button.dataset.id));
      if (i === undefined) continue;
      const [x, y] = renderer.screenOf(i);
      button.dataset.x = String(Math.round(x));
      button.dataset.y = String(Math.round(y));
    }
  }

  // The selected node marked and scrolled into the list's view.
  function mark() {
    for (const button of list.querySelectorAll("button[aria-current]")) button.removeAttribute("aria-current");
    if (store.view.selected === null) return;
    const current = list.querySelector(`button[data-id="${Number(store.view.selected)}"]`);
    if (!current) return;
    current.setAttribute("aria-current", "true");
    const box = details.getBoundingClientRect();
    const own = current.getBoundingClientRect();
    if (own.top < box.top || own.bottom > box.bottom) current.scrollIntoView({ block: "nearest" });
  }

  function restructure() {
    orderDirty = true;
    items.clear();
    shown = "";
    schedule();
  }

  details.addEventListener("toggle", () => {
    shown = "";
    update();
  });
  store.on("structure", restructure);
  store.on("attributes", restructure);
  store.on("visibility", restructure);
  store.on("positions", schedule);
  let marked = null;
  store.on("view", () => {
    const selected = store.view.selected;
    if (!details.open || selected === marked) return;
    marked = selected;
    if (selected !== null && !list.querySelector(`button[data-id="${Number(selected)}"]`)) schedule();
    else mark();
  });
  // A pan or zoom shows in a drawn frame: compare the view with the last one listed.
  renderer.onDraw(() => {
    const t = renderer.transform;
    const { width, height } = renderer.size();
    const key = `${t.k},${t.x},${t.y},${width},${height}`;
    if (key === lastView) return;
    lastView = key;
    schedule();
  });
  simulation.onSettled(update);

  // Opening or closing the list resizes the canvas above it (from its bottom edge; the view
  // stays put). A view fitted to the whole graph when the summary was clicked is fitted
  // again to the new size, so opening the list does not push part of the graph out of view.
  let refit = false;
  details.querySelector("summary").addEventListener("click", () => {
    const t = renderer.transform;
    const f = renderer.fitTransform();
    refit = Math.abs(t.k - f.k) <= 1e-4 * f.k && Math.abs(t.x - f.x) < 1 && Math.abs(t.y - f.y) < 1;
  });
  new ResizeObserver(() => {
    if (!refit) return;
    refit = false;
    interactions.fit(undefined, { duration: 0 });
  }).observe(details);
  interactions.onZoomEnd(() => {
    place();
    schedule();
  });

  list.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-id]");
    if (button) onOpen(Number(button.dataset.id));
  });
  list.addEventListener("keydown", (event) => {
    const button = event.target.closest("button[data-id]");
    if (!button || !(event.key === "ContextMenu" || (event.key === "F10" && event.shiftKey))) return;
    event.preventDefault();
    const rect = button.getBoundingClientRect();
    onMenu({ node: Number(button.dataset.id), x: rect.left + 12, y: rect.bottom + 2, opener: button });
  });
  list.addEventListener("contextmenu", (event) => {
    const button = event.target.closest("button[data-id]");
    if (!button) return;
    event.preventDefault();
    onMenu({ node: Number(button.dataset.id), x: event.clientX, y: event.clientY, opener: button });
  });

  return { refresh: schedule };
}
