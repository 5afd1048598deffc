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
      return request(`${base}/graph?${query({ hubs: count, ...serverFilters(filters) })}`);
    },

    // Those of `ids` that are active and match `filters`; edges among them (only those
    // touching `touching` when given). Posted: thousands of ids do not fit in a URL.
    // With edges: false, only which of `ids` match (nodes {id}, no edges).
    bulk(ids, { touching, filters = {}, edges } = {}) {
      return request(`${base}/graph`, {
        method: "POST",
        body: { ids, touching, edges, ...serverFilters(filters) },
      });
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
