// The statistics sidebar: counts, the entity type distribution (bars in HTML, coloured
// like the nodes), the best-connected entities and the newest sources, from the API's
// stats, hubs and sources lists. Hubs open in the graph; a source can become the filter.

import { idButtonItem } from "./elements.js";

function entry(list, term, value) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  dd.textContent = Number(value).toLocaleString();
  list.append(dt, dd);
}

export async function initStats({ counts, types, hubs, sources, api, colours, onHub, onSource }) {
  const [stats, top, recent] = await Promise.all([
    api.stats(),
    api.topHubs(10),
    api.sources(6),
  ]);

  counts.replaceChildren();
  entry(counts, "Entities", stats.entities);
  entry(counts, "Relations", stats.relations);
  entry(counts, "Sources", stats.counts.sources);
  entry(counts, "Documents", stats.counts.documents);
  entry(counts, "Mentions", stats.counts.mentions);
  entry(counts, "Max. degree", stats.max_degree);

  const byType = Object.entries(stats.entities_by_type).sort((a, b) => b[1] - a[1]);
  colours.setTypeOrder(byType.map(([name]) => name));
  const max = byType.length ? byType[0][1] : 1;
  types.replaceChildren(
    ...byType.slice(0, 14).map(([name, count]) => {
      const li = document.createElement("li");
      const label = document.createElement("span");
      label.className = "bar-label";
      label.textContent = name;
      const track = document.createElement("span");
      track.className = "bar-track";
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = `${Math.max(2, (100 * count) / max)}%`;
      bar.style.background = colours.forType(name);
      track.append(bar);
      const value = document.createElement("span");
      value.className = "bar-value";
      value.textContent = Number(count).toLocaleString();
      li.append(label, track, value);
      return li;
    }),
  );

  hubs.replaceChildren(
    ...top.items.map((node) => {
      const { li, button } = idButtonItem({ id: node.id, text: node.name });
      const meta = document.createElement("span");
      meta.className = "hub-degree";
      meta.textContent = ` ${node.degree}`;
      li.append(meta);
      return li;
    }),
  );
  hubs.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-id]");
    if (button) onHub(Number(button.dataset.id));
  });

  const items = recent.items || [];
  sources.replaceChildren(
    ...items.slice(0, 6).map((source) => {
      const { li, button } = idButtonItem({
        id: source.id,
        text: source.name || source.origin || `source ${source.id}`,
      });
      button.title = "Show only what this source mentions";
      const status = document.createElement("span");
      status.className = `source-status status-${source.status}`;
      status.textContent = ` ${source.status}`;
      li.append(status);
      return li;
    }),
  );
  if (!items.length) {
    const li = document.createElement("li");
    li.className = "help";
    li.textContent = "No sources yet.";
    sources.append(li);
  }
  sources.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-id]");
    if (button) onSource(Number(button.dataset.id));
  });

  return { stats, sources: items };
}
