// The context menu of a node or an edge: a right-click on the canvas, or from the keyboard
// Shift+F10 / the context-menu key on the focused canvas (the selected node or edge) or on a
// button of "Nodes in view". An ARIA menu: arrow keys, Home and End move between its items,
// Enter or Space runs one, Escape (or Tab, or a click elsewhere) closes it and gives focus
// back to whatever opened it. Item labels are fixed strings; the names in its heading come
// from documents and go in with textContent.

export function initContextMenu({ menu, store, actions }) {
  const graph = store.graph;
  let opener = null;

  function item(label, run) {
    const button = document.createElement("button");
    button.type = "button";
    button.setAttribute("role", "menuitem");
    button.tabIndex = -1;
    button.textContent = label;
    button.addEventListener("click", () => {
      close({ refocus: false });
      run();
    });
    return button;
  }

  function nodeItems(id) {
    const pinned = store.view.pinned.has(id);
    return [
      item("Open panel", () => actions.openEntity(id)),
      item("Expand", () => actions.expand(id)),
      item("Hide", () => actions.hideNode(id)),
      item(pinned ? "Unpin" : "Pin", () => store.setPinned(id, !pinned)),
      item("Find passages in Ask", () => actions.ask([id])),
      item("Curate", () => actions.curateEntity(id)),
    ];
  }

  function edgeItems(id) {
    return [
      item("Open panel", () => actions.openRelation(id)),
      item("Hide", () => actions.hideEdge(id)),
      item("Find passages in Ask", () => actions.askEdge(id)),
      item("Curate", () => actions.curateRelation(id)),
    ];
  }

  // What the menu is about, in words, for its accessible name and its heading.
  function subject({ node, edge }) {
    if (node !== undefined) {
      const i = graph.index.get(node);
      return i === undefined ? null : graph.nodes[i].name;
    }
    const j = graph.edgeIndex.get(edge);
    if (j === undefined) return null;
    const e = graph.edges[j];
    return `${graph.nodes[e.s].name} ${e.type} ${graph.nodes[e.t].name}`;
  }

  // target: {node: id} or {edge: id}; x, y: viewport pixels; opener: the element to refocus.
  function open(target) {
    const name = subject(target);
    if (name === null) return;
    opener = target.opener || document.activeElement;
    const heading = document.createElement("p");
    heading.className = "graph-menu-title";
    heading.setAttribute("aria-hidden", "true");
    heading.textContent = name.length > 60 ? `${name.slice(0, 59)}…` : name;
    const items = target.node !== undefined ? nodeItems(target.node) : edgeItems(target.edge);
    menu.replaceChildren(heading, ...items);
    menu.setAttribute("aria-label", `${target.node !== undefined ? "Node" : "Edge"}: ${name}`);
    menu.dataset.kind = target.node !== undefined ? "node" : "edge";
    menu.dataset.id = String(target.node !== undefined ? target.node : target.edge);
    menu.hidden = false;
    const x = Math.min(target.x, window.innerWidth - menu.offsetWidth - 4);
    const y = Math.min(target.y, window.innerHeight - menu.offsetHeight - 4);
    menu.style.left = `${Math.max(0, Math.round(x))}px`;
    menu.style.top = `${Math.max(0, Math.round(y))}px`;
    items[0].focus();
  }

  function close({ refocus = true } = {}) {
    if (menu.hidden) return;
    menu.hidden = true;
    menu.replaceChildren();
    if (refocus && opener && opener.isConnected) opener.focus();
    opener = null;
  }

  function move(step) {
    const items = [...menu.querySelectorAll("[role=menuitem]")];
    const at = items.indexOf(document.activeElement);
    const next = step === "first" ? 0 : step === "last" ? items.length - 1 : (at + step + items.length) % items.length;
    items[next].focus();
  }

  menu.addEventListener("keydown", (event) => {
    const keys = { ArrowDown: 1, ArrowUp: -1, Home: "first", End: "last" };
    if (event.key in keys) move(keys[event.key]);
    else if (event.key === "Escape") close();
    else if (event.key === "Tab") close();
    else return;
    event.preventDefault();
  });
  document.addEventListener("pointerdown", (event) => {
    if (!menu.hidden && !menu.contains(event.target)) close({ refocus: false });
  });
  window.addEventListener("blur", () => close({ refocus: false }));
  store.on("structure", () => close({ refocus: false }));

  return { open, close };
}
