// The loaded graph and what the person is looking at, shared by every module.
//
// Nodes and edges are plain objects copied from the server's payloads (the simulation runs
// in a worker on its own copies, so nothing here is mutated by d3). Positions live in one
// Float32Array (x0, y0, x1, y1, ...) that the worker's ticks overwrite: drawing thousands
// of nodes reads one typed array instead of chasing objects. Modules listen for:
//   "structure"  nodes or edges added or removed (the layout and the drawing regroup)
//   "attributes" names, types or weights changed
//   "visibility" the filters changed what is shown
//   "view"       selection, hover, path, search matches, pins or colours changed (a redraw)
//   "pins"       a node was pinned or unpinned (the layout holds it)
//   "positions"  the layout moved nodes (a redraw)
//   "state"      something the URL keeps changed

const GOLDEN = Math.PI * (3 - Math.sqrt(5));

export function emptyFilters() {
  return { types: [], rtypes: [], source: "", after: "", before: "", minw: 0, mindeg: 0 };
}

export function createStore() {
  const events = new EventTarget();
  const graph = {
    nodes: [], // {id, name, type, degree, mention_count, community}
    edges: [], // {id, source, target, type, weight, s, t} (s, t: node indices)
    index: new Map(), // node id -> index
    edgeIndex: new Map(), // edge id -> index
    pos: new Float32Array(0),
    nodeVisible: new Uint8Array(0),
    edgeVisible: new Uint8Array(0),
    visibleCount: 0,
    maxWeight: 1,
  };
  const view = {
    selected: null, // entity id whose panel is open
    selectedEdge: null, // relation id whose panel is open
    hovered: -1, // node index under the pointer
    hoveredEdge: -1, // edge index under the pointer (when no node is)
    search: "", // the "Find an entity" box's text, folded: loaded nodes containing it are ringed
    matches: [], // indices of the visible nodes whose names contain `search`
    pinned: new Set(), // ids of nodes the layout holds where they are
    hidden: new Set(), // ids of nodes hidden by hand (context menu), until "show hidden"
    hiddenEdges: new Set(), // ids of edges hidden by hand
    path: null, // {nodes: Set(ids), edges: Set(ids), ends: [from, to]}
    colour: "type",
    filters: emptyFilters(),
    serverMatch: null, // Set of ids matching the server-side filters, or null (no such filter)
    seeds: [], // ids whose neighbourhoods were expanded, in order
    hubs: 0, // hubs loaded
    community: null, // the community key whose members were loaded (the community map's drill)
  };

  function emit(name, detail) {
    events.dispatchEvent(new CustomEvent(name, { detail }));
  }

  function on(name, listener) {
    events.addEventListener(name, (event) => listener(event.detail));
  }

  function reindex() {
    graph.index = new Map(graph.nodes.map((node, i) => [node.id, i]));
    graph.edges = graph.edges.filter((e) => graph.index.has(e.source) && graph.index.has(e.target));
    graph.edgeIndex = new Map();
    let maxWeight = 0;
    graph.edges.forEach((edge, j) => {
      edge.s = graph.index.get(edge.source);
      edge.t = graph.index.get(edge.target);
      graph.edgeIndex.set(edge.id, j);
      maxWeight = Math.max(maxWeight, edge.weight);
    });
    graph.maxWeight = maxWeight || 1;
  }

  function growPositions(count) {
    if (graph.pos.length >= count * 2) return;
    const next = new Float32Array(count * 2);
    next.set(graph.pos.subarray(0, Math.min(graph.pos.length, next.length)));
    graph.pos = next;
  }

  // Where a new node starts: next to a loaded neighbour (expansions grow out of the node
  // expanded), else on a sunflower spiral around the centre, best-connected first.
  function place(newIndices, nearIndex, payloadEdges) {
    const neighbour = new Map();
    for (const edge of payloadEdges) {
      const s = graph.index.get(edge.source);
      const t = graph.index.get(edge.target);
      if (s === undefined || t === undefined) continue;
      if (!neighbour.has(s)) neighbour.set(s, t);
      if (!neighbour.has(t)) neighbour.set(t, s);
    }
    const placed = new Set(Array.from({ length: graph.nodes.length }, (_, i) => i));
    for (const i of newIndices) placed.delete(i);
    const spiralStart = placed.size;
    let spiral = 0;
    const ordered = [...newIndices].sort((a, b) => graph.nodes[b].degree - graph.nodes[a].degree);
    for (const i of ordered) {
      let anchor = nearIndex !== undefined && nearIndex !== i && placed.has(nearIndex) ? nearIndex : undefined;
      const other = neighbour.get(i);
      if (anchor === undefined && other !== undefined && placed.has(other)) anchor = other;
      if (anchor !== undefined) {
        const angle = Math.random() * 2 * Math.PI;
        const radius = 25 + Math.random() * 35;
        graph.pos[2 * i] = graph.pos[2 * anchor] + radius * Math.cos(angle);
        graph.pos[2 * i + 1] = graph.pos[2 * anchor + 1] + radius * Math.sin(angle);
      } else {
        const k = spiralStart + spiral++;
        const radius = 12 * Math.sqrt(0.5 + k);
        graph.pos[2 * i] = radius * Math.cos(k * GOLDEN);
        graph.pos[2 * i + 1] = radius * Math.sin(k * GOLDEN);
      }
      placed.add(i);
    }
  }

  // Add a graph payload: new nodes and edges appended, known ones refreshed. Returns the
  // ids of the nodes and edges that are new.
  function merge(payload, { near } = {}) {
    const addedNodes = [];
    const newIndices = [];
    let changed = false;
    for (const raw of payload.nodes || []) {
      const known = graph.index.get(raw.id);
      const node = {
        id: raw.id,
        name: String(raw.name ?? ""),
        type: String(raw.type ?? ""),
        degree: raw.degree ?? 0,
        mention_count: raw.mention_count ?? 0,
        community: raw.community ?? null,
      };
      // A neighbouring community drawn next to a drilled one (communitymap.js): not an
      // entity, so never sent back to the server (ids()), expanded or opened as a panel.
      if (raw.ghost === true) {
        node.ghost = true;
        node.communityKey = String(raw.communityKey ?? "");
      }
      if (known === undefined) {
        graph.index.set(node.id, graph.nodes.length);
        newIndices.push(graph.nodes.length);
        graph.nodes.push(node);
        addedNodes.push(node.id);
      } else {
        const old = graph.nodes[known];
        if (old.name !== node.name || old.type !== node.type || old.degree !== node.degree || old.community !== node.community) {
          graph.nodes[known] = node;
          changed = true;
        }
      }
    }
    const addedEdges = [];
    for (const raw of payload.edges || []) {
      if (!graph.index.has(raw.source) || !graph.index.has(raw.target)) continue;
      const known = graph.edgeIndex.get(raw.id);
      const edge = { id: raw.id, source: raw.source, target: raw.target, type: String(raw.type ?? ""), weight: Number(raw.weight) || 0 };
      if (known === undefined) {
        graph.edgeIndex.set(edge.id, graph.edges.length);
        graph.edges.push(edge);
        addedEdges.push(edge.id);
      } else {
        const old = graph.edges[known];
        if (old.weight !== edge.weight || old.type !== edge.type || old.source !== edge.source || old.target !== edge.target) {
          graph.edges[known] = edge;
          changed = true;
        }
      }
    }
    if (addedNodes.length || addedEdges.length) {
      growPositions(graph.nodes.length);
      place(newIndices, near === undefined ? undefined : graph.index.get(near), payload.edges || []);
      reindex();
      applyFilters(false);
      emit("structure", { addedNodes, addedEdges });
    } else if (changed) {
      reindex();
      applyFilters(false);
      emit("attributes");
    }
    return { addedNodes, addedEdges };
  }

  // Drop nodes (and their edges), keeping everyone else's position.
  function remove(ids) {
    const gone = new Set(ids);
    if (![...gone].some((id) => graph.index.has(id))) return;
    const keep = [];
    const pos = [];
    graph.nodes.forEach((node, i) => {
      if (gone.has(node.id)) return;
      keep.push(node);
      pos.push(graph.pos[2 * i], graph.pos[2 * i + 1]);
    });
    graph.nodes = keep;
    graph.pos = Float32Array.from(pos);
    reindex();
    if (gone.has(view.selected)) view.selected = null;
    view.seeds = view.seeds.filter((id) => !gone.has(id));
    view.hovered = -1;
    applyFilters(false);
    emit("structure", { removedNodes: [...gone] });
    emit("state");
  }

  // Make the loaded graph what the server says now about these nodes: nodes it no longer
  // returns (merged, deleted) go, the edges among the rest are exactly its edges.
  function sync(payload, ids) {
    const present = new Set((payload.nodes || []).map((n) => n.id));
    const gone = ids.filter((id) => !present.has(id));
    if (gone.length) remove(gone);
    const fresh = new Set((payload.edges || []).map((e) => e.id));
    const asked = new Set(ids);
    const before = graph.edges.length;
    graph.edges = graph.edges.filter((e) => fresh.has(e.id) || !(asked.has(e.source) && asked.has(e.target)));
    if (graph.edges.length !== before) {
      reindex();
      applyFilters(false);
      emit("structure", {});
    }
    merge(payload);
  }

  function clear() {
    graph.nodes = [];
    graph.edges = [];
    graph.pos = new Float32Array(0);
    reindex();
    view.selected = null;
    view.selectedEdge = null;
    view.hovered = -1;
    view.path = null;
    view.pinned.clear();
    view.hidden.clear();
    view.hiddenEdges.clear();
    view.seeds = [];
    view.hubs = 0;
    view.community = null;
    applyFilters(false);
    emit("structure", { cleared: true });
    emit("state");
  }

  function applyFilters(notify = true) {
    const f = view.filters;
    const types = f.types.length ? new Set(f.types) : null;
    const rtypes = f.rtypes.length ? new Set(f.rtypes) : null;
    const match = view.serverMatch;
    const n = graph.nodes.length;
    graph.nodeVisible = new Uint8Array(n);
    let count = 0;
    for (let i = 0; i < n; i++) {
      const node = graph.nodes[i];
      const shown =
        !view.hidden.has(node.id) &&
        (!types || types.has(node.type)) &&
        node.degree >= (f.mindeg || 0) &&
        (!match || match.has(node.id) || (view.path && view.path.nodes.has(node.id)));
      graph.nodeVisible[i] = shown ? 1 : 0;
      count += shown ? 1 : 0;
    }
    graph.visibleCount = count;
    graph.edgeVisible = new Uint8Array(graph.edges.length);
    graph.edges.forEach((edge, j) => {
      const onPath = view.path && view.path.edges.has(edge.id);
      graph.edgeVisible[j] =
        graph.nodeVisible[edge.s] &&
        graph.nodeVisible[edge.t] &&
        !view.hiddenEdges.has(edge.id) &&
        (onPath || ((!rtypes || rtypes.has(edge.type)) && edge.weight >= (f.minw || 0)))
          ? 1
          : 0;
    });
    view.hoveredEdge = -1;
    findMatches();
    if (notify) emit("visibility");
  }

  // Case-insensitive substring match of the search text against the visible nodes' names.
  function findMatches() {
    const q = view.search;
    view.matches = [];
    if (!q) return;
    for (let i = 0; i < graph.nodes.length; i++) {
      if (graph.nodeVisible[i] && graph.nodes[i].name.toLowerCase().includes(q)) view.matches.push(i);
    }
  }

  function setSearch(text) {
    const q = String(text || "").trim().toLowerCase();
    if (q === view.search) return;
    view.search = q;
    findMatches();
    emit("view");
  }

  function setHoveredEdge(index) {
    if (view.hoveredEdge === index) return;
    view.hoveredEdge = index;
    emit("view");
  }

  function setPinned(id, pinned) {
    if (pinned === view.pinned.has(id)) return;
    if (pinned) view.pinned.add(id);
    else view.pinned.delete(id);
    emit("pins", { id, pinned });
    emit("view");
  }

  // Hide nodes and edges by hand (the context menu); unhide() shows them all again.
  function hide({ nodes = [], edges = [] }) {
    for (const id of nodes) view.hidden.add(id);
    for (const id of edges) view.hiddenEdges.add(id);
    if (nodes.includes(view.selected)) view.selected = null;
    if (edges.includes(view.selectedEdge)) view.selectedEdge = null;
    view.hovered = -1;
    applyFilters();
    emit("view");
    emit("state");
  }

  function unhide() {
    view.hidden.clear();
    view.hiddenEdges.clear();
    applyFilters();
    emit("view");
  }

  function setFilters(filters) {
    view.filters = { ...emptyFilters(), ...filters };
    applyFilters();
    emit("state");
  }

  function setServerMatch(ids) {
    view.serverMatch = ids ? new Set(ids) : null;
    applyFilters();
  }

  function select(id) {
    if (view.selected === id && view.selectedEdge === null) return;
    view.selected = id;
    view.selectedEdge = null;
    emit("view");
    emit("state");
  }

  function selectEdge(id) {
    view.selectedEdge = id;
    view.selected = null;
    emit("view");
    emit("state");
  }

  function setHovered(index) {
    if (view.hovered === index) return;
    view.hovered = index;
    emit("view");
  }

  function setPath(path) {
    view.path = path;
    applyFilters();
    emit("view");
    emit("state");
  }

  function setColour(mode) {
    view.colour = mode === "community" ? "community" : "type";
    emit("view", { colours: true });
    emit("state");
  }

  function addSeed(id) {
    view.seeds = [...view.seeds.filter((s) => s !== id), id];
    emit("state");
  }

  return {
    graph,
    view,
    on,
    emit,
    merge,
    remove,
    sync,
    clear,
    applyFilters,
    setFilters,
    setServerMatch,
    select,
    selectEdge,
    setHovered,
    setHoveredEdge,
    setSearch,
    setPinned,
    hide,
    unhide,
    setPath,
    setColour,
    addSeed,
    // The loaded entities' ids (ghost community nodes are not entities).
    ids: () => graph.nodes.filter((n) => !n.ghost).map((n) => n.id),
    has: (id) => graph.index.has(id),
    indexOf: (id) => graph.index.get(id),
  };
}
