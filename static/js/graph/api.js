// Every request the explorer makes, in one place: the JSON API (session auth; the CSRF
// header on anything that is not a GET), piece by piece for what a person asks for and in
// bulk (`…/graph`) for thousands of nodes at once. Both answer the same graph payload, so
// the rest of the code never asks where data came from.
import { csrfToken } from "../csrf-token.js";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(url, { method = "GET", body, signal } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["X-CSRFToken"] = csrfToken();
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
    signal,
  });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const data = await response.json();
      if (data && data.error && data.error.message) message = data.error.message;
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(response.status, message);
  }
  return response.json();
}

// The bulk loads' compact shape (`format=columns`: parallel arrays, types and edge ends as
// indexes) back into the object shape every other call answers: a node field per column
// (the ids-only answer has only `id`), plain loops (50,000 nodes decode in milliseconds).
function fromColumns(payload) {
  if (payload.format !== "columns") return payload;
  const { nodes: n, edges: e, types, relation_types: relationTypes } = payload;
  const fields = Object.keys(n);
  const nodes = new Array(n.id.length);
  for (let i = 0; i < nodes.length; i++) {
    const node = {};
    for (const field of fields) node[field] = n[field][i];
    if ("type" in node) node.type = types[node.type] ?? null;
    nodes[i] = node;
  }
  const edges = new Array(e.id.length);
  for (let j = 0; j < edges.length; j++) {
    edges[j] = {
      id: e.id[j],
      source: n.id[e.source[j]],
      target: n.id[e.target[j]],
      type: relationTypes[e.type[j]],
      weight: e.weight[j],
    };
  }
  return { nodes, edges, truncated: payload.truncated, count: payload.count };
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === "") continue;
    search.set(key, Array.isArray(value) ? value.join(",") : String(value));
  }
  return search.toString();
}

// Filters the server applies (knowledge/api/graph.py, the bulk loads) from the explorer's own.
export function serverFilters(filters) {
  return {
    types: filters.types && filters.types.length ? filters.types : undefined,
    source: filters.source || undefined,
    seen_after: filters.after || undefined,
    seen_before: filters.before || undefined,
    min_degree: filters.mindeg || undefined,
  };
}

export function initApi(config) {
  const base = config.api; // /api/v1/workspaces/<slug>
  const ws = config.workspace;
  const withWs = (url, params = {}) => `${url}?${query({ ...params, ws })}`;
  // The most ids the API's graph calls take (the server's limit, from the page).
  const maxIds = config.maxIds;

  return {
    workspace: ws,
    maxIds,

    // The top `count` hubs matching the filters, and the edges among them.
    hubs(count, filters = {}) {
      return request(`${base}/graph?${query({ hubs: count, format: "columns", ...serverFilters(filters) })}`).then(fromColumns);
    },

    // Those of `ids` that are active and match `filters`; edges among them (only those
    // touching `touching` when given). Posted: thousands of ids do not fit in a URL.
    // With edges: false, only which of `ids` match (nodes {id}, no edges).
    bulk(ids, { touching, filters = {}, edges } = {}) {
      return request(`${base}/graph`, {
        method: "POST",
        body: { ids, touching, edges, format: "columns", ...serverFilters(filters) },
      }).then(fromColumns);
    },

    neighborhood(id, { hops = 1, limit = 150 } = {}) {
      return request(`${base}/entities/${encodeURIComponent(id)}/neighborhood?${query({ hops, limit })}`);
    },

    // The edges among `ids` (and their nodes, fresh): the API while it can take them all.
    subgraph(ids, { touching } = {}) {
      if (ids.length <= maxIds && !touching) {
        return request(`${base}/subgraph?${query({ ids })}`);
      }
      return this.bulk(ids, { touching });
    },

    // One relation with its newest `evidenceLimit` evidence rows (the edge's hover card).
    relation(id, { evidenceLimit = 1, signal } = {}) {
      return request(`${base}/relations/${encodeURIComponent(id)}?${query({ evidence_limit: evidenceLimit })}`, { signal });
    },

    path(from, to, { maxHops = 6 } = {}) {
      return request(`${base}/path?${query({ from, to, max_hops: maxHops })}`);
    },

    searchEntities(q, { limit = 8, signal } = {}) {
      return request(`${base}/entities?${query({ q, limit })}`, { signal });
    },

    // The community map: the top level (parent null) or the sub-communities of `parent`.
    communityMap(parent) {
      return request(`${base}/communities/map?${query({ parent })}`);
    },

    // A community's members (best-connected first, at most `limit`) with the edges among
    // them, plus its stubs to and the names of its neighbouring communities.
    communityGraph(key, { limit = 5000 } = {}) {
      return request(`${base}/communities/${encodeURIComponent(key)}/graph?${query({ limit })}`);
    },

    stats() {
      return request(`${base}/stats`);
    },

    topHubs(limit = 10) {
      return request(`${base}/hubs?${query({ limit })}`);
    },

    sources(limit = 100) {
      return request(`${base}/sources?${query({ limit })}`);
    },

    entityPanelUrl(id) {
      return withWs(config.entityPanelUrl.replace(/0\/$/, `${encodeURIComponent(id)}/`));
    },

    relationPanelUrl(id) {
      return withWs(config.relationPanelUrl.replace(/0\/$/, `${encodeURIComponent(id)}/`));
    },
  };
}
