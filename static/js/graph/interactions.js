// Pointer and keyboard on the canvas: d3-zoom pans and zooms, d3-drag moves a node (the
// layout worker keeps the rest following), a click opens a node's or an edge's panel, a
// double-click expands a node's neighbourhood, hovering an edge shows its card, a right-click
// (or Shift+F10 / the context-menu key on the focused canvas, for the selected node or edge)
// opens the context menu. Drag is attached before zoom so that a press on a node drags it
// while a press on empty space pans.

import { drag, select, zoom, zoomIdentity } from "../../vendor/d3.js";

export function initInteractions({
  canvas,
  tooltip,
  store,
  renderer,
  simulation,
  onNode,
  onEdge,
  onBackground,
  onExpand,
  onEdgeHover,
  onMenu,
  menuOpen = () => false,
}) {
  const graph = store.graph;
  const listeners = { zoomend: [] };
  let animation = null;
  let panning = false;

  // Pans and zooms by hand are "gestures": the renderer may move a bitmap meanwhile.
  const zoomBehaviour = zoom()
    .scaleExtent([0.01, 12])
    .on("start", (event) => {
      if (!event.sourceEvent) return;
      panning = true;
      renderer.gesture(true);
      store.setHovered(-1);
    })
    .on("zoom", (event) => {
      renderer.setTransform(event.transform);
      hideTooltip();
      hoverEdge(-1);
    })
    .on("end", () => {
      panning = false;
      renderer.gesture(false);
      for (const listener of listeners.zoomend) listener(renderer.transform);
    });

  const dragBehaviour = drag()
    .container(canvas)
    .subject((event) => {
      const index = renderer.hitNode(event.x, event.y);
      if (index < 0) return null;
      const [sx, sy] = renderer.screenOf(index);
      return { index, x: sx, y: sy };
    })
    // The layout is only disturbed once the node actually moves: a click (or the first
    // half of a double-click) leaves the settled picture alone.
    .on("start", (event) => {
      event.subject.moved = false;
    })
    .on("drag", (event) => {
      const [x, y] = renderer.worldOf(event.x, event.y);
      if (!event.subject.moved) {
        event.subject.moved = true;
        canvas.classList.add("dragging");
        simulation.dragStart(event.subject.index, x, y);
      } else {
        simulation.drag(event.subject.index, x, y);
      }
    })
    .on("end", (event) => {
      if (!event.subject.moved) return;
      simulation.dragEnd(event.subject.index);
      canvas.classList.remove("dragging");
    });

  const selection = select(canvas);
  selection.call(dragBehaviour).call(zoomBehaviour).on("dblclick.zoom", null);

  function pointOf(event) {
    const rect = canvas.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  }

  canvas.addEventListener("click", (event) => {
    const [sx, sy] = pointOf(event);
    const index = renderer.hitNode(sx, sy);
    if (index >= 0) {
      onNode(graph.nodes[index].id);
      return;
    }
    const edge = renderer.hitEdge(sx, sy);
    if (edge >= 0) onEdge(graph.edges[edge].id);
    else onBackground();
  });

  canvas.addEventListener("dblclick", (event) => {
    const [sx, sy] = pointOf(event);
    const index = renderer.hitNode(sx, sy);
    if (index >= 0) onExpand(graph.nodes[index].id);
  });

  let hoverFrame = 0;
  let lastPointer = null;
  canvas.addEventListener("mousemove", (event) => {
    lastPointer = pointOf(event);
    if (hoverFrame) return;
    hoverFrame = requestAnimationFrame(() => {
      hoverFrame = 0;
      // (an open context menu keeps the pointer's tooltips away from it)
      if (!lastPointer || panning || canvas.classList.contains("dragging") || menuOpen()) return;
      const [sx, sy] = lastPointer;
      const index = renderer.hitNode(sx, sy);
      store.setHovered(index);
      const edge = index < 0 ? renderer.hitEdge(sx, sy) : -1;
      canvas.classList.toggle("over-node", index >= 0 || edge >= 0);
      if (index >= 0) showTooltip(index, sx, sy);
      else hideTooltip();
      hoverEdge(edge, sx, sy);
    });
  });
  canvas.addEventListener("mouseleave", () => {
    lastPointer = null;
    store.setHovered(-1);
    hideTooltip();
    hoverEdge(-1);
  });

  function hoverEdge(index, sx, sy) {
    store.setHoveredEdge(index);
    if (onEdgeHover) onEdgeHover(index, sx, sy);
  }

  // The context menu for what is under the pointer (nothing under it: the browser's own).
  canvas.addEventListener("contextmenu", (event) => {
    const [sx, sy] = pointOf(event);
    const index = renderer.hitNode(sx, sy);
    const edge = index < 0 ? renderer.hitEdge(sx, sy) : -1;
    if (index < 0 && edge < 0) return;
    event.preventDefault();
    hideTooltip();
    hoverEdge(-1);
    if (index >= 0) onMenu({ node: graph.nodes[index].id, x: event.clientX, y: event.clientY, opener: canvas });
    else onMenu({ edge: graph.edges[edge].id, x: event.clientX, y: event.clientY, opener: canvas });
  });

  // From the keyboard: the menu of the selected node or edge, next to it on screen.
  function menuFromKeyboard() {
    const { view } = store;
    const rect = canvas.getBoundingClientRect();
    const node = view.selected !== null ? graph.index.get(view.selected) : undefined;
    if (node !== undefined && graph.nodeVisible[node]) {
      const [x, y] = renderer.screenOf(node);
      onMenu({ node: view.selected, x: rect.left + x, y: rect.top + y, opener: canvas });
      return true;
    }
    const edge = view.selectedEdge !== null ? graph.edgeIndex.get(view.selectedEdge) : undefined;
    if (edge !== undefined && graph.edgeVisible[edge]) {
      const e = graph.edges[edge];
      const [ax, ay] = renderer.screenOf(e.s);
      const [bx, by] = renderer.screenOf(e.t);
      onMenu({ edge: view.selectedEdge, x: rect.left + (ax + bx) / 2, y: rect.top + (ay + by) / 2, opener: canvas });
      return true;
    }
    return false;
  }

  function showTooltip(index, sx, sy) {
    const node = graph.nodes[index];
    tooltip.replaceChildren();
    const name = document.createElement("strong");
    name.textContent = node.name;
    const meta = document.createElement("span");
    meta.textContent = ` ${node.type} · degree ${node.degree}`;
    tooltip.append(name, meta);
    tooltip.style.left = `${Math.round(sx + 14)}px`;
    tooltip.style.top = `${Math.round(sy + 10)}px`;
    tooltip.hidden = false;
  }

  function hideTooltip() {
    tooltip.hidden = true;
  }

  canvas.addEventListener("keydown", (event) => {
    const step = 60;
    const moves = {
      ArrowLeft: [step, 0],
      ArrowRight: [-step, 0],
      ArrowUp: [0, step],
      ArrowDown: [0, -step],
    };
    if (event.key === "ContextMenu" || (event.key === "F10" && event.shiftKey)) {
      if (!menuFromKeyboard()) return;
    } else if (moves[event.key] && !event.altKey) {
      // (Alt+Arrow moves the selection to a neighbour: keyboard.js)
      selection.call(zoomBehaviour.translateBy, moves[event.key][0] / renderer.transform.k, moves[event.key][1] / renderer.transform.k);
    } else if (event.key === "+" || event.key === "=") {
      zoomBy(1.4);
    } else if (event.key === "-" || event.key === "_") {
      zoomBy(1 / 1.4);
    } else if (event.key === "0") {
      fit();
    } else {
      return;
    }
    event.preventDefault();
  });

  // Moves the view to `target` over `duration` ms (0: at once), through d3-zoom so that
  // its own state and the next gesture start from there.
  function zoomTo(target, { duration = 350 } = {}) {
    if (animation) cancelAnimationFrame(animation);
    animation = null;
    if (!duration || window.matchMedia("(prefers-reduced-motion: reduce)").matches) {
      selection.call(zoomBehaviour.transform, target);
      return;
    }
    const from = renderer.transform;
    const started = performance.now();
    const step = (now) => {
      const t = Math.min(1, (now - started) / duration);
      const e = t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2;
      const k = from.k * Math.pow(target.k / from.k, e);
      const x = from.x + (target.x - from.x) * e;
      const y = from.y + (target.y - from.y) * e;
      selection.call(zoomBehaviour.transform, zoomIdentity.translate(x, y).scale(k));
      animation = t < 1 ? requestAnimationFrame(step) : null;
      if (t >= 1) selection.call(zoomBehaviour.transform, target);
    };
    animation = requestAnimationFrame(step);
  }

  function zoomBy(factor) {
    const { width, height } = renderer.size();
    selection.call(zoomBehaviour.scaleBy, factor, [width / 2, height / 2]);
  }

  function fit(indices, options) {
    zoomTo(renderer.fitTransform(indices), options);
  }

  // Centre a node, zooming in enough to read its neighbourhood.
  function centreOn(index, { duration = 350 } = {}) {
    const { width, height } = renderer.size();
    const k = Math.max(renderer.transform.k, 1.2);
    const x = graph.pos[2 * index];
    const y = graph.pos[2 * index + 1];
    zoomTo(zoomIdentity.translate(width / 2 - k * x, height / 2 - k * y).scale(k), { duration });
  }

  return {
    zoomTo,
    zoomBy,
    fit,
    centreOn,
    onZoomEnd(listener) {
      listeners.zoomend.push(listener);
    },
  };
}
