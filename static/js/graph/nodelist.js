// "Nodes in view": the loaded, visible nodes as a list of buttons, because a canvas is
// unreachable by keyboard and invisible to screen readers. Each button opens that node's
// panel; its data-x / data-y give the node's position on the canvas (CSS pixels from the
// canvas's top left), refreshed when the layout settles and after each zoom, so a test can
// also click the canvas itself. Built only while the list is open (10k buttons cost).
// Shift+F10 or the context-menu key on a button opens that node's context menu.

import { idButtonItem } from "./elements.js";

export function initNodeList({ details, list, count, store, renderer, simulation, interactions, onOpen, onMenu }) {
  const graph = store.graph;
  let frame = 0;

  function build() {
    const order = [];
    for (let i = 0; i < graph.nodes.length; i++) if (graph.nodeVisible[i]) order.push(i);
    order.sort((a, b) => graph.nodes[a].name.localeCompare(graph.nodes[b].name) || a - b);
    const items = order.map((i) => {
      const node = graph.nodes[i];
      const { li, button } = idButtonItem({ id: node.id, className: "node-button" });
      const name = document.createElement("span");
      name.className = "node-name";
      name.textContent = node.name;
      const meta = document.createElement("span");
      meta.className = "node-meta";
      meta.textContent = ` ${node.type}, degree ${node.degree}`;
      button.append(name, meta);
      if (store.view.selected === node.id) button.setAttribute("aria-current", "true");
      return li;
    });
    list.replaceChildren(...items);
    place();
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

  function refresh() {
    count.textContent = String(graph.visibleCount);
    if (!details.open || frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      build();
    });
  }

  details.addEventListener("toggle", refresh);
  store.on("structure", refresh);
  store.on("attributes", refresh);
  store.on("visibility", refresh);
  store.on("view", () => {
    if (!details.open) return;
    for (const button of list.querySelectorAll("button[aria-current]")) button.removeAttribute("aria-current");
    const current = list.querySelector(`button[data-id="${Number(store.view.selected)}"]`);
    if (current) current.setAttribute("aria-current", "true");
  });
  simulation.onSettled(place);
  interactions.onZoomEnd(place);

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

  return { refresh };
}
