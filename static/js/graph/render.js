// Drawing the graph on a canvas, fast enough for thousands of nodes: SVG cannot keep up.
//
// What keeps a frame cheap at 5,000 nodes and 10,000 edges:
// - nothing is drawn unless something changed (a layout tick, the view, the selection):
//   requests are coalesced into one requestAnimationFrame;
// - edges are batched into one path per weight class (three strokes, not ten thousand),
//   nodes into one path per colour (one fill each); nodes smaller than two pixels on
//   screen are squares, which rasterise much faster than arcs;
// - beyond WIDE_EDGES_UP_TO edges, edges are one pixel wide, their weight shown by
//   opacity alone: a software canvas (no GPU) strokes hairlines several times faster than
//   wider lines, the difference between 30 frames a second and 5 at 10,000 edges;
// - while someone pans or zooms a graph that is not moving, the last picture (drawn with
//   a margin around the viewport) is moved and scaled as a bitmap, and redrawn properly
//   when the gesture ends;
// - while a node of a big settled graph is dragged, only its surroundings move (at most 400
//   nodes, layout-worker.js names them): everything else is drawn once into a still layer,
//   and each frame copies that layer and draws only the moving nodes and their edges on it
//   (a drag at 20,000 nodes / 40,000 edges would otherwise rasterise every edge per frame);
// - whatever lies outside the viewport is skipped;
// - labels (text is the slowest thing a canvas draws) only for nodes big enough on screen,
//   at most LABEL_MAX, never overlapping, plus the selected, hovered and path nodes;
// - edges show their direction and type only once the view is close enough to read them
//   (the same level of detail as node labels): arrowheads from ARROW_MIN_SCALE, batched into
//   one filled path per weight class, and only while at most ARROW_MAX edges are on screen
//   (never while a big graph moves: the hairlines alone must keep a drag at 30 fps);
//   relation-type labels from EDGE_LABEL_SCALE, along the edge, at most EDGE_LABEL_MAX,
//   never overlapping a node's label, drawn with fillText (edge types come from documents
//   and LLMs: a canvas draws them as pixels, never as markup).
// Hit tests for the pointer are a linear scan of the visible nodes (and edges): well under
// a millisecond at 10k, once per animation frame at most.

import { zoomIdentity } from "../../vendor/d3.js";

// Below this many visible edges, weight classes are drawn 0.8, 1.4 and 2.4 pixels wide.
const WIDE_EDGES_UP_TO = 1500;
const WIDE_EDGE_WIDTHS = [0.8, 1.4, 2.4];
const EDGE_COLOURS = ["rgba(110, 120, 140, 0.22)", "rgba(100, 110, 130, 0.4)", "rgba(80, 90, 110, 0.62)"];
const HIGHLIGHT = "#2f5fd0";
const PATH_COLOUR = "#e8590c";
const LABEL_MAX = 180;
const THIN_HIGHLIGHTS_ABOVE = 100; // highlighted edges drawn as hairlines in a drag's frames
const MOVING_LABEL_MAX = 40; // labels of moving nodes per frame of a drag (see movingLabels)
const LABEL_FONT = "12px system-ui, -apple-system, 'Segoe UI', sans-serif";
const LABEL_MIN_RADIUS = 7; // screen pixels a node needs before its label is drawn
const TOP_LABELS = 12; // the best-connected nodes get a label sooner
const BACKGROUND = "#ffffff";
// Edges: arrowheads and type labels (see the top of this file).
const ARROW_MIN_SCALE = 0.6;
const ARROW_MAX = 3000;
const ARROW_PX = 8; // length of an arrowhead on screen
const ARROW_COLOURS = ["rgba(90, 100, 120, 0.6)", "rgba(80, 90, 110, 0.75)", "rgba(60, 70, 90, 0.9)"];
const EDGE_LABEL_SCALE = 1.1;
const EDGE_LABEL_MAX = 150;
const EDGE_LABEL_FONT = "10px system-ui, -apple-system, 'Segoe UI', sans-serif";
const MATCH_COLOUR = "#7048e8";
const PIN_COLOUR = "#495057";
// The bitmap kept for gestures extends this share of the viewport beyond each side.
const CACHE_MARGIN = 0.25;

export function radiusFor(degree) {
  return Math.min(28, 3 + 1.7 * Math.sqrt(degree || 0));
}

export function initRenderer({ canvas, store, colours }) {
  const ctx = canvas.getContext("2d", { alpha: false });
  const graph = store.graph;
  let transform = zoomIdentity;
  let width = 0;
  let height = 0;
  let dpr = 1;
  let scheduled = false;
  let radius = new Float32Array(0);
  let byDegree = []; // node indices, best-connected first
  let colourGroups = []; // [{colour, nodes: Int32Array}]
  let edgeClasses = [[], [], []]; // edge indices by weight class
  let visibleEdges = 0;
  let dirtyGroups = true;
  let out = ctx; // the context being drawn on: the canvas, or the gesture bitmap
  let contentVersion = 0; // bumped whenever anything but the view transform changes
  let drawnVersion = -1; // the content of the last frame drawn directly
  let gesture = false;
  const cache = { canvas: document.createElement("canvas"), version: -1, transform: null, mx: 0, my: 0 };
  const cacheCtx = cache.canvas.getContext("2d", { alpha: false });
  // The still layer of a local drag (see the top of this file): keyed by the worker's
  // movingId, the content but positions, the view transform and the canvas size.
  const still = { canvas: document.createElement("canvas"), id: 0, version: -1, transform: null, size: "" };
  const stillCtx = still.canvas.getContext("2d", { alpha: false });
  let stillVersion = 0; // bumped whenever anything but the moving nodes' positions changes
  let moving = null; // {moving: Int32Array, movingId} while a local drag lasts
  let excluded = null; // Uint8Array: nodes the scene being drawn leaves out (the moving ones)
  const listeners = [];
  // layers: frames drawn from the still layer of a drag (moving) and how often that layer
  // itself was drawn (still): what tests read to tell the cached path was taken.
  const stats = { draws: 0, lastDrawMs: 0, layers: { still: 0, moving: 0 } };
  let shownEdges = []; // edge indices on screen in the last scene, when it drew edge details
  let recording = null; // {arrows, edgeLabels} of the last scene, for tests (record())

  function resize() {
    const rect = canvas.getBoundingClientRect();
    dpr = window.devicePixelRatio || 1;
    width = Math.max(1, Math.round(rect.width));
    height = Math.max(1, Math.round(rect.height));
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    changed();
  }

  function regroup() {
    const n = graph.nodes.length;
    radius = new Float32Array(n);
    for (let i = 0; i < n; i++) radius[i] = radiusFor(graph.nodes[i].degree);
    byDegree = Array.from({ length: n }, (_, i) => i).sort(
      (a, b) => graph.nodes[b].degree - graph.nodes[a].degree || a - b,
    );
    const groups = new Map();
    for (let i = 0; i < n; i++) {
      if (!graph.nodeVisible[i]) continue;
      const colour = colours.forNode(graph.nodes[i]);
      if (!groups.has(colour)) groups.set(colour, []);
      groups.get(colour).push(i);
    }
    colourGroups = [...groups.entries()].map(([colour, nodes]) => ({ colour, nodes: Int32Array.from(nodes) }));
    edgeClasses = [[], [], []];
    const max = graph.maxWeight || 1;
    graph.edges.forEach((edge, j) => {
      if (!graph.edgeVisible[j]) return;
      const share = edge.weight / max;
      edgeClasses[share < 0.34 ? 0 : share < 0.67 ? 1 : 2].push(j);
    });
    edgeClasses = edgeClasses.map((c) => Int32Array.from(c));
    visibleEdges = edgeClasses.reduce((sum, c) => sum + c.length, 0);
    dirtyGroups = false;
  }

  function requestDraw() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(draw);
  }

  function invalidate() {
    dirtyGroups = true;
    changed();
  }

  function changed() {
    contentVersion += 1;
    stillVersion += 1;
    requestDraw();
  }

  // New positions: of the named moving nodes only (a local drag), or of any node.
  function moved(detail) {
    moving = detail && detail.moving ? detail : null;
    if (!moving) stillVersion += 1;
    contentVersion += 1;
    requestDraw();
  }

  function draw() {
    scheduled = false;
    const started = performance.now();
    if (dirtyGroups) regroup();
    if (gesture && graph.nodes.length && (cacheCovers() || drawnVersion === contentVersion)) {
      // The picture is not changing, only the view: move the bitmap, draw it if missing.
      if (!cacheCovers()) drawCache();
      blitCache();
    } else if (moving && !gesture && graph.nodes.length) {
      if (!stillCovers()) {
        drawStill();
        stats.layers.still += 1;
      }
      stats.layers.moving += 1;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.drawImage(still.canvas, 0, 0);
      out = ctx;
      movingScene(transform.x, transform.y, transform.k);
      drawnVersion = contentVersion;
    } else {
      out = ctx;
      scene(width, height, transform.x, transform.y, transform.k);
      drawnVersion = contentVersion;
    }
    stats.draws += 1;
    stats.lastDrawMs = performance.now() - started;
    for (const listener of listeners) listener(stats);
  }

  // The whole graph on `out`, a w x h (CSS pixels) area seen through (tx, ty, k).
  function scene(w, h, tx, ty, k) {
    const pos = graph.pos;
    out.setTransform(dpr, 0, 0, dpr, 0, 0);
    out.fillStyle = BACKGROUND;
    out.fillRect(0, 0, w, h);
    if (!graph.nodes.length) return;
    out.setTransform(dpr * k, 0, 0, dpr * k, dpr * tx, dpr * ty);
    // The world rectangle on screen, with a margin for node radii.
    const margin = 30;
    const x0 = -tx / k - margin;
    const y0 = -ty / k - margin;
    const x1 = (w - tx) / k + margin;
    const y1 = (h - ty) / k + margin;

    out.lineCap = "butt";
    // A few edges may show their weight by width too; thousands stay hairlines.
    const wide = visibleEdges <= WIDE_EDGES_UP_TO;
    const busy = gesture || canvas.dataset.layout === "running";
    let details = k >= ARROW_MIN_SCALE && !(busy && !wide);
    shownEdges = [];
    for (let c = 0; c < 3; c++) {
      const edges = edgeClasses[c];
      if (!edges.length) continue;
      out.beginPath();
      for (let m = 0; m < edges.length; m++) {
        const edge = graph.edges[edges[m]];
        const ax = pos[2 * edge.s];
        const ay = pos[2 * edge.s + 1];
        const bx = pos[2 * edge.t];
        const by = pos[2 * edge.t + 1];
        // Both ends beyond the same side of the viewport: the segment cannot cross it.
        if ((ax < x0 && bx < x0) || (ax > x1 && bx > x1) || (ay < y0 && by < y0) || (ay > y1 && by > y1)) continue;
        if (excluded && (excluded[edge.s] || excluded[edge.t])) continue;
        out.moveTo(ax, ay);
        out.lineTo(bx, by);
        if (details) {
          shownEdges.push(edges[m]);
          if (shownEdges.length > ARROW_MAX) details = false;
        }
      }
      out.strokeStyle = EDGE_COLOURS[c];
      out.lineWidth = (wide ? WIDE_EDGE_WIDTHS[c] : 1) / k;
      out.stroke();
    }
    if (!details) shownEdges = [];
    if (recording) recording = { arrows: [], edgeLabels: [] };
    drawArrows(k, tx, ty);
    if (!excluded) drawHighlightedEdges(k);

    for (const group of colourGroups) {
      out.fillStyle = group.colour;
      out.beginPath();
      const nodes = group.nodes;
      for (let m = 0; m < nodes.length; m++) {
        const i = nodes[m];
        const x = pos[2 * i];
        const y = pos[2 * i + 1];
        if (x < x0 || x > x1 || y < y0 || y > y1) continue;
        if (excluded && excluded[i]) continue;
        const r = radius[i];
        if (r * k < 2) {
          out.rect(x - r, y - r, 2 * r, 2 * r);
        } else {
          out.moveTo(x + r, y);
          out.arc(x, y, r, 0, 2 * Math.PI);
        }
      }
      out.fill();
    }
    if (!excluded) drawRings(k);
    out.setTransform(dpr, 0, 0, dpr, 0, 0);
    const fits = drawLabels(k, tx, ty, w, h);
    drawEdgeLabels(k, tx, ty, fits);
  }

  // An arrowhead at the target end of each edge on screen, its tip on the target's rim;
  // one path per weight class. Edges too short on screen to show one get none.
  function drawArrows(k, tx, ty) {
    if (!shownEdges.length) return;
    const pos = graph.pos;
    const length = ARROW_PX / k;
    const paths = [[], [], []];
    const max = graph.maxWeight || 1;
    for (const j of shownEdges) {
      const share = graph.edges[j].weight / max;
      paths[share < 0.34 ? 0 : share < 0.67 ? 1 : 2].push(j);
    }
    for (let c = 0; c < 3; c++) {
      if (!paths[c].length) continue;
      out.beginPath();
      for (const j of paths[c]) {
        const edge = graph.edges[j];
        const ax = pos[2 * edge.s];
        const ay = pos[2 * edge.s + 1];
        const bx = pos[2 * edge.t];
        const by = pos[2 * edge.t + 1];
        const dx = bx - ax;
        const dy = by - ay;
        const span = Math.sqrt(dx * dx + dy * dy);
        const rim = radius[edge.t];
        if (span <= radius[edge.s] + rim + 2 * length) continue;
        const ux = dx / span;
        const uy = dy / span;
        const tipX = bx - ux * rim;
        const tipY = by - uy * rim;
        const baseX = tipX - ux * length;
        const baseY = tipY - uy * length;
        const half = length * 0.42;
        out.moveTo(tipX, tipY);
        out.lineTo(baseX - uy * half, baseY + ux * half);
        out.lineTo(baseX + uy * half, baseY - ux * half);
        out.closePath();
        if (recording) recording.arrows.push({ id: edge.id, x: tipX * k + tx, y: tipY * k + ty });
      }
      out.fillStyle = ARROW_COLOURS[c];
      out.fill();
    }
  }

  // Relation types along the edges on screen, upright, heaviest first, where they fit.
  function drawEdgeLabels(k, tx, ty, fits) {
    const forced = forcedEdges().filter((j) => !excluded || !(excluded[graph.edges[j].s] || excluded[graph.edges[j].t]));
    const candidates = k >= EDGE_LABEL_SCALE && shownEdges.length ? [...shownEdges].reverse() : [];
    let drawn = 0;
    if (forced.length || candidates.length) {
      out.font = EDGE_LABEL_FONT;
      out.textBaseline = "middle";
      out.textAlign = "center";
      out.lineJoin = "round";
      const seen = new Set();
      for (const j of [...forced, ...candidates]) {
        if (drawn >= EDGE_LABEL_MAX || seen.has(j)) continue;
        seen.add(j);
        if (edgeLabel(j, k, tx, ty, fits, forced.includes(j))) drawn++;
      }
      out.textAlign = "start";
      out.setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    if (canvas.dataset.edgeLabels !== String(drawn)) canvas.dataset.edgeLabels = String(drawn);
  }

  // The hovered and the selected edge: their type is always labelled.
  function forcedEdges() {
    const forced = [];
    if (store.view.hoveredEdge >= 0 && graph.edgeVisible[store.view.hoveredEdge]) forced.push(store.view.hoveredEdge);
    const selected = store.view.selectedEdge !== null ? graph.edgeIndex.get(store.view.selectedEdge) : undefined;
    if (selected !== undefined && graph.edgeVisible[selected]) forced.push(selected);
    return forced;
  }

  function edgeLabel(j, k, tx, ty, fits, force) {
    const edge = graph.edges[j];
    const ax = graph.pos[2 * edge.s] * k + tx;
    const ay = graph.pos[2 * edge.s + 1] * k + ty;
    const bx = graph.pos[2 * edge.t] * k + tx;
    const by = graph.pos[2 * edge.t + 1] * k + ty;
    let text = edge.type;
    if (text.length > 32) text = `${text.slice(0, 31)}…`;
    const textWidth = out.measureText(text).width;
    const span = Math.hypot(bx - ax, by - ay) - (radius[edge.s] + radius[edge.t]) * k;
    if (span < textWidth + 8 && !force) return false;
    const mx = (ax + bx) / 2;
    const my = (ay + by) / 2;
    let angle = Math.atan2(by - ay, bx - ax);
    if (angle > Math.PI / 2) angle -= Math.PI;
    else if (angle < -Math.PI / 2) angle += Math.PI;
    const halfW = (Math.abs(Math.cos(angle)) * textWidth) / 2 + 2;
    const halfH = (Math.abs(Math.sin(angle)) * textWidth) / 2 + 6;
    if (!fits(mx - halfW, my - halfH, mx + halfW, my + halfH) && !force) return false;
    const cos = Math.cos(angle);
    const sin = Math.sin(angle);
    out.setTransform(dpr * cos, dpr * sin, -dpr * sin, dpr * cos, dpr * mx, dpr * my);
    out.lineWidth = 3;
    out.strokeStyle = "rgba(255, 255, 255, 0.92)";
    out.strokeText(text, 0, 0);
    out.fillStyle = force ? "#1d2330" : "#4a5263";
    out.fillText(text, 0, 0);
    if (recording) recording.edgeLabels.push({ id: edge.id, text, x: mx, y: my });
    return true;
  }

  // --- the gesture bitmap ---------------------------------------------------------------------

  function drawCache() {
    cache.mx = Math.round(width * CACHE_MARGIN);
    cache.my = Math.round(height * CACHE_MARGIN);
    const w = width + 2 * cache.mx;
    const h = height + 2 * cache.my;
    if (cache.canvas.width !== Math.round(w * dpr) || cache.canvas.height !== Math.round(h * dpr)) {
      cache.canvas.width = Math.round(w * dpr);
      cache.canvas.height = Math.round(h * dpr);
    }
    out = cacheCtx;
    scene(w, h, transform.x + cache.mx, transform.y + cache.my, transform.k);
    out = ctx;
    cache.version = contentVersion;
    cache.transform = transform;
  }

  // Where the bitmap lands on screen now: its scale and top-left corner (CSS pixels).
  function cachePlacement() {
    const s = transform.k / cache.transform.k;
    return { s, x: transform.x - s * (cache.transform.x + cache.mx), y: transform.y - s * (cache.transform.y + cache.my) };
  }

  function cacheCovers() {
    if (cache.version !== contentVersion || !cache.transform) return false;
    const { s, x, y } = cachePlacement();
    if (s < 0.5 || s > 2) return false;
    const w = width + 2 * cache.mx;
    const h = height + 2 * cache.my;
    return x <= 0 && y <= 0 && x + s * w >= width && y + s * h >= height;
  }

  function blitCache() {
    const { s, x, y } = cachePlacement();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(cache.canvas, x * dpr, y * dpr, cache.canvas.width * s, cache.canvas.height * s);
  }

  // --- the still layer of a local drag --------------------------------------------------------

  function stillCovers() {
    const size = `${canvas.width}x${canvas.height}`;
    return still.id === moving.movingId && still.version === stillVersion && still.transform === transform && still.size === size;
  }

  // Everything but the moving nodes and their edges, once; and what each frame then draws:
  // the moving nodes by colour, the edges touching them by weight class.
  function drawStill() {
    const n = graph.nodes.length;
    const mask = new Uint8Array(n);
    for (const i of moving.moving) if (i < n) mask[i] = 1;
    if (still.canvas.width !== canvas.width || still.canvas.height !== canvas.height) {
      still.canvas.width = canvas.width;
      still.canvas.height = canvas.height;
    }
    excluded = mask;
    out = stillCtx;
    scene(width, height, transform.x, transform.y, transform.k);
    excluded = null;
    out = ctx;
    const max = graph.maxWeight || 1;
    still.edges = [[], [], []];
    graph.edges.forEach((edge, j) => {
      if (!graph.edgeVisible[j] || !(mask[edge.s] || mask[edge.t])) return;
      const share = edge.weight / max;
      still.edges[share < 0.34 ? 0 : share < 0.67 ? 1 : 2].push(j);
    });
    const groups = new Map();
    for (const i of moving.moving) {
      if (i >= n || !graph.nodeVisible[i]) continue;
      const colour = colours.forNode(graph.nodes[i]);
      if (!groups.has(colour)) groups.set(colour, []);
      groups.get(colour).push(i);
    }
    still.groups = [...groups.entries()].map(([colour, nodes]) => ({ colour, nodes }));
    still.mask = mask;
    // Visible moving nodes, best-connected (so biggest) first: the order labels are tried in.
    still.byDegree = still.groups.flatMap((group) => group.nodes).sort((a, b) => graph.nodes[b].degree - graph.nodes[a].degree || a - b);
    still.id = moving.movingId;
    still.version = stillVersion;
    still.transform = transform;
    still.size = `${canvas.width}x${canvas.height}`;
  }

  function movingScene(tx, ty, k) {
    const pos = graph.pos;
    out.setTransform(dpr * k, 0, 0, dpr * k, dpr * tx, dpr * ty);
    const wide = visibleEdges <= WIDE_EDGES_UP_TO;
    for (let c = 0; c < 3; c++) {
      if (!still.edges[c].length) continue;
      out.beginPath();
      for (const j of still.edges[c]) {
        const edge = graph.edges[j];
        out.moveTo(pos[2 * edge.s], pos[2 * edge.s + 1]);
        out.lineTo(pos[2 * edge.t], pos[2 * edge.t + 1]);
      }
      out.strokeStyle = EDGE_COLOURS[c];
      out.lineWidth = (wide ? WIDE_EDGE_WIDTHS[c] : 1) / k;
      out.stroke();
    }
    drawHighlightedEdges(k, true);
    for (const group of still.groups) {
      out.fillStyle = group.colour;
      out.beginPath();
      for (const i of group.nodes) {
        const r = radius[i];
        if (r * k < 2) {
          out.rect(pos[2 * i] - r, pos[2 * i + 1] - r, 2 * r, 2 * r);
        } else {
          out.moveTo(pos[2 * i] + r, pos[2 * i + 1]);
          out.arc(pos[2 * i], pos[2 * i + 1], r, 0, 2 * Math.PI);
        }
      }
      out.fill();
    }
    drawRings(k);
    out.setTransform(dpr, 0, 0, dpr, 0, 0);
    movingLabels(k, tx, ty);
  }

  // The labels of the moving nodes: the selected, hovered and path ones always, then the
  // best-connected big enough on screen where they do not overlap, at most
  // MOVING_LABEL_MAX (text is what a software canvas draws slowest: a zoomed-in drag would
  // otherwise spend most of each frame on it); the type of the hovered or selected edge
  // when it has a moving end (the still layer left those out).
  function movingLabels(k, tx, ty) {
    const forced = new Set(forcedNodes().filter((i) => still.mask[i] && graph.nodeVisible[i]));
    out.font = LABEL_FONT;
    out.textBaseline = "middle";
    out.lineJoin = "round";
    const taken = new Set();
    const fits = (left, top, right, bottom) => {
      const cells = [];
      for (let cx = Math.floor(left / 16); cx <= Math.floor(right / 16); cx++) {
        for (let cy = Math.floor(top / 16); cy <= Math.floor(bottom / 16); cy++) cells.push(cx * 100003 + cy);
      }
      if (cells.some((cell) => taken.has(cell))) return false;
      for (const cell of cells) taken.add(cell);
      return true;
    };
    let drawn = 0;
    const seen = new Set();
    for (const i of [...forced, ...still.byDegree]) {
      if (seen.has(i)) continue;
      seen.add(i);
      const force = forced.has(i);
      const r = radius[i] * k;
      if (!force && (r < LABEL_MIN_RADIUS || drawn >= MOVING_LABEL_MAX)) break;
      let text = graph.nodes[i].name;
      if (text.length > 40) text = `${text.slice(0, 39)}…`;
      const x = graph.pos[2 * i] * k + tx + r + 3;
      const y = graph.pos[2 * i + 1] * k + ty;
      if (!fits(x, y - 7, x + 7 * text.length, y + 7) && !force) continue;
      out.lineWidth = 3;
      out.strokeStyle = "rgba(255, 255, 255, 0.9)";
      out.strokeText(text, x, y);
      out.fillStyle = force ? "#101522" : "#2a3142";
      out.fillText(text, x, y);
      drawn++;
    }
    const edges = forcedEdges().filter((j) => still.mask[graph.edges[j].s] || still.mask[graph.edges[j].t]);
    if (!edges.length) return;
    out.font = EDGE_LABEL_FONT;
    out.textAlign = "center";
    for (const j of edges) edgeLabel(j, k, tx, ty, () => true, true);
    out.textAlign = "start";
    out.setTransform(dpr, 0, 0, dpr, 0, 0);
  }

  function edgeIndicesAround(index) {
    const result = [];
    if (index < 0) return result;
    graph.edges.forEach((edge, j) => {
      if (graph.edgeVisible[j] && (edge.s === index || edge.t === index)) result.push(j);
    });
    return result;
  }

  function strokeEdges(indices, colour, px, k) {
    if (!indices.length) return;
    out.beginPath();
    for (const j of indices) {
      const edge = graph.edges[j];
      out.moveTo(graph.pos[2 * edge.s], graph.pos[2 * edge.s + 1]);
      out.lineTo(graph.pos[2 * edge.t], graph.pos[2 * edge.t + 1]);
    }
    out.strokeStyle = colour;
    out.lineWidth = px / k;
    out.stroke();
  }

  // `moving`: a frame of a drag, where a hub's hundreds of highlighted edges are drawn as
  // hairlines (a software canvas strokes those several times faster than wider lines).
  function drawHighlightedEdges(k, moving = false) {
    const { view } = store;
    const focus = view.selected !== null ? graph.index.get(view.selected) : undefined;
    const around = new Set(edgeIndicesAround(focus === undefined ? -1 : focus));
    for (const j of edgeIndicesAround(view.hovered)) around.add(j);
    const thin = moving && around.size > THIN_HIGHLIGHTS_ABOVE;
    strokeEdges([...around], "rgba(47, 95, 208, 0.75)", thin ? 1 : 1.6, k);
    if (view.hoveredEdge >= 0 && graph.edgeVisible[view.hoveredEdge]) strokeEdges([view.hoveredEdge], HIGHLIGHT, 2.5, k);
    if (view.selectedEdge !== null) {
      const j = graph.edgeIndex.get(view.selectedEdge);
      if (j !== undefined) strokeEdges([j], HIGHLIGHT, 3.5, k);
    }
    if (view.path) {
      const onPath = [];
      for (const id of view.path.edges) {
        const j = graph.edgeIndex.get(id);
        if (j !== undefined) onPath.push(j);
      }
      strokeEdges(onPath, PATH_COLOUR, 4, k);
    }
  }

  function ring(i, colour, px, k) {
    const x = graph.pos[2 * i];
    const y = graph.pos[2 * i + 1];
    out.beginPath();
    out.arc(x, y, radius[i] + px / k, 0, 2 * Math.PI);
    out.strokeStyle = colour;
    out.lineWidth = (px * 0.9) / k;
    out.stroke();
  }

  // One ring of `px` screen pixels around each of `indices`, as one path.
  function rings(indices, colour, px, k) {
    if (!indices.length) return;
    out.beginPath();
    for (const i of indices) {
      const x = graph.pos[2 * i];
      const y = graph.pos[2 * i + 1];
      const r = radius[i] + px / k;
      out.moveTo(x + r, y);
      out.arc(x, y, r, 0, 2 * Math.PI);
    }
    out.strokeStyle = colour;
    out.lineWidth = (px * 0.9) / k;
    out.stroke();
  }

  function drawRings(k) {
    const { view } = store;
    rings(view.matches, MATCH_COLOUR, 3, k);
    if (view.pinned.size) {
      const pinned = [];
      for (const id of view.pinned) {
        const i = graph.index.get(id);
        if (i !== undefined && graph.nodeVisible[i]) pinned.push(i);
      }
      rings(pinned, PIN_COLOUR, 1.5, k);
    }
    if (view.path) {
      for (const id of view.path.nodes) {
        const i = graph.index.get(id);
        if (i !== undefined) ring(i, PATH_COLOUR, 3, k);
      }
    }
    if (view.hovered >= 0 && view.hovered < graph.nodes.length) ring(view.hovered, "#1d2330", 2, k);
    const selected = view.selected !== null ? graph.index.get(view.selected) : undefined;
    if (selected !== undefined) {
      ring(selected, "#ffffff", 2, k);
      ring(selected, HIGHLIGHT, 4, k);
    }
  }

  // The nodes always labelled: the selected one, the hovered one, those on the path.
  function forcedNodes() {
    const { view } = store;
    const forced = [];
    const selected = view.selected !== null ? graph.index.get(view.selected) : undefined;
    if (selected !== undefined) forced.push(selected);
    if (view.hovered >= 0) forced.push(view.hovered);
    if (view.path) {
      for (const id of view.path.nodes) {
        const i = graph.index.get(id);
        if (i !== undefined) forced.push(i);
      }
    }
    return forced;
  }

  function drawLabels(k, tx, ty, w, h) {
    const forced = forcedNodes();
    out.font = LABEL_FONT;
    out.textBaseline = "middle";
    out.lineJoin = "round";
    const cell = 16;
    const taken = new Set();
    // Cells of a coarse grid taken by labels drawn so far: a label overlapping one is skipped.
    const fits = (left, top, right, bottom) => {
      const cx0 = Math.floor(left / cell);
      const cx1 = Math.floor(right / cell);
      const cy0 = Math.floor(top / cell);
      const cy1 = Math.floor(bottom / cell);
      for (let cx = cx0; cx <= cx1; cx++) for (let cy = cy0; cy <= cy1; cy++) if (taken.has(cx * 100003 + cy)) return false;
      for (let cx = cx0; cx <= cx1; cx++) for (let cy = cy0; cy <= cy1; cy++) taken.add(cx * 100003 + cy);
      return true;
    };
    let drawn = 0;
    const label = (i, force) => {
      if (!graph.nodeVisible[i] && !force) return;
      if (excluded && excluded[i]) return;
      const r = radius[i] * k;
      const sx = graph.pos[2 * i] * k + tx;
      const sy = graph.pos[2 * i + 1] * k + ty;
      if (sx < -100 || sx > w + 20 || sy < -20 || sy > h + 20) return;
      let text = graph.nodes[i].name;
      if (text.length > 40) text = `${text.slice(0, 39)}…`;
      const textWidth = out.measureText(text).width;
      const x = sx + r + 3;
      if (!fits(x, sy - 7, x + textWidth, sy + 7) && !force) return;
      out.lineWidth = 3;
      out.strokeStyle = "rgba(255, 255, 255, 0.9)";
      out.strokeText(text, x, sy);
      out.fillStyle = force ? "#101522" : "#2a3142";
      out.fillText(text, x, sy);
      drawn++;
    };
    const seen = new Set();
    for (const i of forced) {
      if (seen.has(i)) continue;
      seen.add(i);
      label(i, true);
    }
    for (let m = 0; m < byDegree.length && drawn < LABEL_MAX; m++) {
      const i = byDegree[m];
      if (seen.has(i)) continue;
      const r = radius[i] * k;
      // byDegree is sorted by degree, so by radius: nothing further down is bigger.
      if (r < LABEL_MIN_RADIUS && !(m < TOP_LABELS && r >= 2.5)) {
        if (m >= TOP_LABELS) break;
        continue;
      }
      label(i, false);
    }
    return fits;
  }

  // --- queries for the pointer and the accessible node list ---------------------------------

  function worldOf(sx, sy) {
    return transform.invert([sx, sy]);
  }

  function screenOf(i) {
    return transform.apply([graph.pos[2 * i], graph.pos[2 * i + 1]]);
  }

  // The visible node under screen point (sx, sy), or -1.
  function hitNode(sx, sy, slack = 4) {
    const [x, y] = worldOf(sx, sy);
    const extra = slack / transform.k;
    let best = -1;
    let bestGap = Infinity;
    for (let i = 0; i < graph.nodes.length; i++) {
      if (!graph.nodeVisible[i]) continue;
      const dx = graph.pos[2 * i] - x;
      const dy = graph.pos[2 * i + 1] - y;
      const gap = Math.sqrt(dx * dx + dy * dy) - radius[i];
      if (gap <= extra && gap < bestGap) {
        best = i;
        bestGap = gap;
      }
    }
    return best;
  }

  // The visible edge nearest to screen point (sx, sy) within a few pixels, or -1.
  function hitEdge(sx, sy, slack = 5) {
    const [x, y] = worldOf(sx, sy);
    const limit = slack / transform.k;
    let best = -1;
    let bestDistance = limit;
    graph.edges.forEach((edge, j) => {
      if (!graph.edgeVisible[j]) return;
      const ax = graph.pos[2 * edge.s];
      const ay = graph.pos[2 * edge.s + 1];
      const bx = graph.pos[2 * edge.t];
      const by = graph.pos[2 * edge.t + 1];
      const dx = bx - ax;
      const dy = by - ay;
      const length2 = dx * dx + dy * dy;
      const t = length2 ? Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / length2)) : 0;
      const px = ax + t * dx - x;
      const py = ay + t * dy - y;
      const distance = Math.sqrt(px * px + py * py);
      if (distance < bestDistance) {
        best = j;
        bestDistance = distance;
      }
    });
    return best;
  }

  // The transform that shows these node indices (all visible ones by default).
  function fitTransform(indices, { padding = 40, maxScale = 2.5 } = {}) {
    let xmin = Infinity;
    let ymin = Infinity;
    let xmax = -Infinity;
    let ymax = -Infinity;
    const list = indices || [...Array(graph.nodes.length).keys()].filter((i) => graph.nodeVisible[i]);
    for (const i of list) {
      const r = radius[i] || radiusFor(graph.nodes[i].degree);
      xmin = Math.min(xmin, graph.pos[2 * i] - r);
      xmax = Math.max(xmax, graph.pos[2 * i] + r);
      ymin = Math.min(ymin, graph.pos[2 * i + 1] - r);
      ymax = Math.max(ymax, graph.pos[2 * i + 1] + r);
    }
    if (!Number.isFinite(xmin)) return zoomIdentity.translate(width / 2, height / 2);
    const k = Math.min(
      maxScale,
      (width - 2 * padding) / Math.max(1, xmax - xmin),
      (height - 2 * padding) / Math.max(1, ymax - ymin),
    );
    const cx = (xmin + xmax) / 2;
    const cy = (ymin + ymax) / 2;
    return zoomIdentity.translate(width / 2 - k * cx, height / 2 - k * cy).scale(k);
  }

  // Draw at once, properly (an export must not get the gesture bitmap).
  function drawNow() {
    const held = gesture;
    gesture = false;
    draw();
    gesture = held;
  }

  store.on("structure", invalidate);
  store.on("attributes", invalidate);
  store.on("visibility", invalidate);
  store.on("view", (detail) => (detail && detail.colours ? invalidate() : changed()));
  store.on("positions", moved);
  new ResizeObserver(resize).observe(canvas);
  resize();

  return {
    canvas,
    stats,
    requestDraw,
    hitNode,
    hitEdge,
    screenOf,
    worldOf,
    fitTransform,
    size: () => ({ width, height }),
    setTransform(next) {
      transform = next;
      requestDraw();
    },
    // A pan or zoom by hand begins or ends (see the module comment).
    gesture(active) {
      gesture = active;
      if (!active) requestDraw();
    },
    // What the last frame drew of the edges' details (arrowheads' tips and type labels, in
    // CSS pixels of the canvas), kept only once asked for: tests read it (perf.js, bench=1).
    record() {
      if (!recording) {
        recording = { arrows: [], edgeLabels: [] };
        drawNow();
      }
      return recording;
    },
    get transform() {
      return transform;
    },
    onDraw(listener) {
      listeners.push(listener);
    },
    drawNow,
  };
}
