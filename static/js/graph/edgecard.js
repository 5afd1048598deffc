// The card shown while the pointer rests on an edge: its relation type, weight, evidence
// count and first evidence sentence. The bulk graph payload carries only ids, ends, type and
// weight, so the rest is fetched (the relation API, one evidence row) after a short pause on
// the edge, and cached per relation for the page's life. Everything in the card is text from
// documents or an LLM: it goes in with textContent, into elements built here.

const DEBOUNCE_MS = 180;
const SENTENCE_MAX = 240;
const CACHE_MAX = 500;

export function initEdgeCard({ card, store, api }) {
  const graph = store.graph;
  const cache = new Map(); // relation id -> {evidence_count, sentence} or {error}
  let shownId = null;
  let timer = 0;
  let controller = null;

  function line(className, text) {
    const element = document.createElement("span");
    element.className = className;
    element.textContent = text;
    return element;
  }

  function bounded(text) {
    const clean = String(text || "")
      .replace(/\s+/g, " ")
      .trim();
    return clean.length > SENTENCE_MAX ? `${clean.slice(0, SENTENCE_MAX - 1)}…` : clean;
  }

  function fill(edge, detail) {
    const source = graph.nodes[edge.s];
    const target = graph.nodes[edge.t];
    const head = document.createElement("strong");
    head.className = "edge-card-type";
    head.textContent = edge.type;
    const ends = line("edge-card-ends", `${source ? source.name : "?"} → ${target ? target.name : "?"}`);
    const facts = [`weight ${Number(edge.weight).toFixed(2).replace(/\.?0+$/, "")}`];
    if (detail && !detail.error) facts.push(`${detail.evidence_count} evidence row${detail.evidence_count === 1 ? "" : "s"}`);
    const meta = line("edge-card-meta", facts.join(" · "));
    let evidence;
    if (!detail) evidence = line("edge-card-evidence pending", "Loading evidence…");
    else if (detail.error) evidence = line("edge-card-evidence", `Evidence unavailable: ${detail.error}`);
    else if (detail.sentence) evidence = line("edge-card-evidence", `“${detail.sentence}”`);
    else evidence = line("edge-card-evidence", "No evidence recorded.");
    card.replaceChildren(head, ends, meta, evidence);
    card.dataset.relation = String(edge.id);
    card.setAttribute("aria-busy", detail ? "false" : "true");
  }

  function place(sx, sy) {
    const parent = card.offsetParent || card.parentElement;
    const width = parent ? parent.clientWidth : window.innerWidth;
    const height = parent ? parent.clientHeight : window.innerHeight;
    const x = Math.min(sx + 16, Math.max(0, width - card.offsetWidth - 8));
    const y = sy + 14 + card.offsetHeight > height ? Math.max(0, sy - card.offsetHeight - 10) : sy + 14;
    card.style.left = `${Math.round(x)}px`;
    card.style.top = `${Math.round(y)}px`;
  }

  async function load(id) {
    if (controller) controller.abort();
    controller = new AbortController();
    try {
      const relation = await api.relation(id, { evidenceLimit: 1, signal: controller.signal });
      const first = (relation.evidence || [])[0];
      remember(id, { evidence_count: relation.evidence_total ?? relation.evidence_count ?? 0, sentence: bounded(first && first.snippet) });
    } catch (error) {
      if (error.name === "AbortError") return;
      remember(id, { error: error.message });
    }
    if (shownId === id) {
      const j = graph.edgeIndex.get(id);
      if (j !== undefined) fill(graph.edges[j], cache.get(id));
    }
  }

  function remember(id, detail) {
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value);
    cache.set(id, detail);
  }

  function show(index, sx, sy) {
    const edge = graph.edges[index];
    if (shownId !== edge.id) {
      shownId = edge.id;
      clearTimeout(timer);
      const detail = cache.get(edge.id);
      fill(edge, detail);
      if (!detail) timer = setTimeout(() => load(edge.id), DEBOUNCE_MS);
    }
    card.hidden = false;
    place(sx, sy);
  }

  function hide() {
    clearTimeout(timer);
    if (controller && shownId !== null && !cache.has(shownId)) controller.abort();
    shownId = null;
    card.hidden = true;
  }

  // The edge under the pointer changed (-1: none).
  function hover(index, sx, sy) {
    if (index >= 0 && index < graph.edges.length) show(index, sx, sy);
    else if (shownId !== null || !card.hidden) hide();
  }

  store.on("structure", hide);
  return { hover, hide };
}
