// The filter form: entity types, relation types, a source, a seen-in range, a minimum edge
// weight and node degree. Types, weight and degree are applied here, at once, to what is
// loaded; a source or a date range needs what only the server knows about each entity, so
// changing those asks it which loaded nodes match (onServerFilters). The checkboxes and
// the sources are rendered by the server; types that turn up later are added here.

import { emptyFilters } from "./store.js";

// Type names are snake_case words: this one matches nothing.
const NONE = "-";

function checkbox(name, value, checked, colour) {
  const label = document.createElement("label");
  const input = document.createElement("input");
  input.type = "checkbox";
  input.name = name;
  input.value = value;
  input.checked = checked;
  label.append(input);
  if (colour) {
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = colour;
    label.append(swatch);
  }
  label.append(document.createTextNode(` ${value}`));
  return label;
}

export function initFilters({ form, store, colours, onServerFilters }) {
  const typeBox = form.querySelector("#filter-types");
  const relationBox = form.querySelector("#filter-relation-types");
  const source = form.querySelector("#filter-source");
  const after = form.querySelector("#filter-after");
  const before = form.querySelector("#filter-before");
  const minWeight = form.querySelector("#filter-min-weight");
  const minDegree = form.querySelector("#filter-min-degree");
  let known = { types: [], rtypes: [] };

  const serverKey = (f) => `${f.source}|${f.after}|${f.before}`;

  function read() {
    const checked = (box) => [...box.querySelectorAll("input:checked")].map((i) => i.value);
    const all = (box) => [...box.querySelectorAll("input")].map((i) => i.value);
    const types = checked(typeBox);
    const rtypes = checked(relationBox);
    // Everything ticked is no filter at all (and types first seen later stay visible);
    // nothing ticked is a type no entity has.
    const chosen = (picked, box) => (picked.length === all(box).length ? [] : picked.length ? picked : [NONE]);
    return {
      types: chosen(types, typeBox),
      rtypes: chosen(rtypes, relationBox),
      source: source.value,
      after: after.value,
      before: before.value,
      minw: Number(minWeight.value) || 0,
      mindeg: Math.max(0, Math.floor(Number(minDegree.value) || 0)),
    };
  }

  function write(filters) {
    const f = { ...emptyFilters(), ...filters };
    for (const input of typeBox.querySelectorAll("input")) input.checked = !f.types.length || f.types.includes(input.value);
    for (const input of relationBox.querySelectorAll("input")) input.checked = !f.rtypes.length || f.rtypes.includes(input.value);
    if (f.source && ![...source.options].some((o) => o.value === f.source)) {
      const option = document.createElement("option");
      option.value = f.source;
      option.textContent = `source ${f.source}`;
      source.append(option);
    }
    source.value = f.source;
    after.value = f.after;
    before.value = f.before;
    minWeight.value = f.minw ? String(f.minw) : "";
    minDegree.value = f.mindeg ? String(f.mindeg) : "";
  }

  // The type checkboxes: the workspace's types (from the stats) and any loaded later.
  function setTypes(types, rtypes) {
    const current = store.view.filters;
    const addAll = (box, names, selected, name, withColour) => {
      const have = new Set([...box.querySelectorAll("input")].map((i) => i.value));
      if (!have.size) box.replaceChildren();
      for (const value of names) {
        if (have.has(value)) continue;
        box.append(checkbox(name, value, !selected.length || selected.includes(value), withColour ? colours.forType(value) : ""));
      }
      if (!box.children.length) {
        const p = document.createElement("p");
        p.className = "help";
        p.textContent = "None yet.";
        box.append(p);
      }
    };
    known = { types: [...new Set([...known.types, ...types])], rtypes: [...new Set([...known.rtypes, ...rtypes])] };
    addAll(typeBox, types, current.types, "type", true);
    addAll(relationBox, rtypes, current.rtypes, "rtype", false);
  }

  function changed() {
    const before = serverKey(store.view.filters);
    const filters = read();
    store.setFilters(filters);
    if (serverKey(filters) !== before) onServerFilters(filters);
  }

  let timer = 0;
  form.addEventListener("change", changed);
  form.addEventListener("input", (event) => {
    if (event.target.type !== "number") return;
    clearTimeout(timer);
    timer = setTimeout(changed, 250);
  });
  form.addEventListener("reset", () => setTimeout(() => {
    write(emptyFilters());
    changed();
  }));
  form.addEventListener("submit", (event) => event.preventDefault());

  // Loaded nodes may bring types the stats did not list (stats are fetched once).
  store.on("structure", () => {
    const types = new Set(store.graph.nodes.map((n) => n.type));
    const rtypes = new Set(store.graph.edges.map((e) => e.type));
    const newTypes = [...types].filter((t) => !known.types.includes(t));
    const newRtypes = [...rtypes].filter((t) => !known.rtypes.includes(t));
    if (newTypes.length || newRtypes.length) setTypes(newTypes, newRtypes);
  });

  // The type checkboxes come from the server, most used first: that order gives colours.
  const serverTypes = [...typeBox.querySelectorAll("input")].map((i) => i.value);
  colours.setTypeOrder(serverTypes);
  known = { types: serverTypes, rtypes: [...relationBox.querySelectorAll("input")].map((i) => i.value) };
  for (const label of typeBox.querySelectorAll("label")) {
    const swatch = label.querySelector(".swatch");
    if (swatch) swatch.style.background = colours.forType(label.querySelector("input").value);
  }

  return {
    read,
    write,
    setSource(id) {
      if (![...source.options].some((o) => o.value === String(id))) {
        const option = document.createElement("option");
        option.value = String(id);
        option.textContent = `source ${id}`;
        source.append(option);
      }
      source.value = String(id);
      changed();
    },
  };
}
