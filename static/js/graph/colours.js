// Node colours by entity type or by community, the same in the drawing, the legend and the
// statistics bars. Type colours follow the workspace's type counts (most common first) so
// a type keeps its colour between visits; communities cycle through the same palette.

export const PALETTE = [
  "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
  "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#8cd17d",
];
export const OTHER = "#9aa3b5";

export function initColours(store) {
  const typeSlots = new Map();

  function slotOf(type) {
    if (!typeSlots.has(type)) typeSlots.set(type, typeSlots.size);
    return typeSlots.get(type);
  }

  function forType(type) {
    const slot = slotOf(type);
    return slot < PALETTE.length ? PALETTE[slot] : OTHER;
  }

  function forCommunity(community) {
    if (community === null || community === undefined) return OTHER;
    return PALETTE[Math.abs(community) % PALETTE.length];
  }

  function forNode(node) {
    // A drilled community's neighbours (ghost nodes, communitymap.js) are neutral grey.
    if (node.ghost) return OTHER;
    return store.view.colour === "community" ? forCommunity(node.community) : forType(node.type);
  }

  // The workspace's types by count, most common first (from the stats endpoint).
  function setTypeOrder(types) {
    for (const type of types) slotOf(type);
  }

  // The legend's rows for what is loaded: [{label, colour, count}], most nodes first.
  function legend() {
    const counts = new Map();
    const { nodes, nodeVisible } = store.graph;
    const community = store.view.colour === "community";
    nodes.forEach((node, i) => {
      if (!nodeVisible[i] || node.ghost) return;
      const key = community ? node.community : node.type;
      counts.set(key, (counts.get(key) || 0) + 1);
    });
    const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]);
    if (!community) {
      return rows.map(([type, count]) => ({ label: type, colour: forType(type), count }));
    }
    const shown = rows.slice(0, PALETTE.length);
    const result = shown.map(([c, count]) => ({
      label: c === null ? "no community" : `community ${c}`,
      colour: forCommunity(c),
      count,
    }));
    const rest = rows.slice(PALETTE.length).reduce((sum, [, count]) => sum + count, 0);
    if (rest) result.push({ label: "other communities", colour: "", count: rest });
    return result;
  }

  return { forType, forCommunity, forNode, setTypeOrder, legend };
}

// The legend list and the colour-mode toggle.
export function initLegend({ list, radios, store, colours }) {
  function render() {
    const rows = colours.legend();
    const items = rows.map((row) => {
      const li = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      if (row.colour) swatch.style.background = row.colour;
      else swatch.classList.add("mixed");
      const label = document.createElement("span");
      label.className = "legend-label";
      label.textContent = row.label;
      const count = document.createElement("span");
      count.className = "legend-count";
      count.textContent = String(row.count);
      li.append(swatch, label, count);
      return li;
    });
    list.replaceChildren(...items);
  }

  for (const radio of radios) {
    radio.addEventListener("change", () => {
      if (radio.checked) store.setColour(radio.value);
    });
  }

  let pending = false;
  const schedule = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      render();
    });
  };
  store.on("structure", schedule);
  store.on("attributes", schedule);
  store.on("visibility", schedule);
  store.on("view", (detail) => {
    if (detail && detail.colours) {
      for (const radio of radios) radio.checked = radio.value === store.view.colour;
      schedule();
    }
  });
  return { render };
}
