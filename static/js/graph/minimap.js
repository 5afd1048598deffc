// The minimap: the whole loaded graph in a corner of the stage, every visible node a dot,
// with the part the canvas shows outlined; a click or a drag in it moves the view there.
//
// It must stay cheap beside a 50k-node drawing, so it keeps two layers:
// - the dots, written pixel by pixel into an ImageData (no path per node) on a bitmap of
//   their own, redrawn when the structure, the filters or the colours change and, while the
//   layout moves, at most every DOTS_MS and only once some node has moved NOTABLE_PX or
//   more on the minimap since the bitmap was drawn (a settling layout's last creeps, or a
//   drag far off in a 50k graph, cost a comparison, not a redraw);
// - the frame: that bitmap copied once plus one rectangle, redrawn when the view moves.
// It only appears while part of the graph is outside the view (a fitted graph needs no
// map), and a toolbar button hides it for good (remembered in localStorage). It is a
// pointer aid, hidden from assistive technology: the keyboard has the "Nodes in view"
// list, the arrow keys and the Fit buttons (the toggle's description says so).
//
// The mapping from the graph's coordinates to the minimap's CSS pixels is published on the
// element (data-scale, data-ox, data-oy: minimap = world * scale + offset) for tests.

import { zoomIdentity } from "../../vendor/d3.js";

const DOTS_MS = 300;
const NOTABLE_PX = 1; // CSS pixels of the minimap
const WIDTH = 180; // CSS pixels (graph.css gives the element the same size)
const HEIGHT = 120;
const PADDING = 6; // CSS pixels around the graph's bounds
const STORAGE_KEY = "graphloom.explorer.minimap";
// Shown once less than this share of the graph's bounds is in view, hidden again above
// HIDE_ABOVE (the gap keeps it from flickering while a fitted layout breathes).
const SHOW_BELOW = 0.85;
const HIDE_ABOVE = 0.97;
const VIEW_COLOUR = "#2f5fd0";

function rgbOf(hex) {
  const match = /^#([0-9a-f]{6})$/i.exec(hex);
  const value = match ? parseInt(match[1], 16) : 0x9aa3b5;
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

function remembered() {
  try {
    return window.localStorage.getItem(STORAGE_KEY) !== "hidden";
  } catch {
    return true;
  }
}

function remember(wanted) {
  try {
    window.localStorage.setItem(STORAGE_KEY, wanted ? "shown" : "hidden");
  } catch {
    // (storage refused: the choice lasts until the page is left)
  }
}

export function initMinimap({ container, canvas, toggle, store, renderer, colours, interactions, onMove }) {
  const graph = store.graph;
  const ctx = canvas.getContext("2d");
  const dots = document.createElement("canvas");
  const dotsCtx = dots.getContext("2d");
  const rgb = new Map(); // colour string -> [r, g, b]
  let wanted = remembered();
  let needed = false; // part of the graph is outside the view
  let bounds = null; // {x0, y0, x1, y1} of the visible nodes, world coordinates
  let map = { scale: 1, ox: 0, oy: 0 };
  const width = WIDTH;
  const height = HEIGHT;
  let dpr = 1;
  let dotsDirty = true;
  let dotsTimer = 0;
  let dotsFrame = 0;
  let lastDots = -Infinity;
  let drawn = ""; // the view and dots version the frame shows
  let dotsVersion = 0;
  let dotsForced = true; // what is shown changed (not only where): redraw whatever moved
  let drawnPos = null; // the positions the bitmap shows (a copy)
  let pressed = false;

  function colourOf(node) {
    const colour = colours.forNode(node);
    if (!rgb.has(colour)) rgb.set(colour, rgbOf(colour));
    return rgb.get(colour);
  }

  function measure() {
    dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(width * dpr)) canvas.width = Math.round(width * dpr);
    if (canvas.height !== Math.round(height * dpr)) canvas.height = Math.round(height * dpr);
  }

  function computeBounds() {
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -Infinity;
    let y1 = -Infinity;
    const pos = graph.pos;
    for (let i = 0; i < graph.nodes.length; i++) {
      if (!graph.nodeVisible[i]) continue;
      const x = pos[2 * i];
      const y = pos[2 * i + 1];
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
    bounds = Number.isFinite(x0) ? { x0, y0, x1, y1 } : null;
  }

  // Whether some visible node moved NOTABLE_PX or more on the minimap since the bitmap.
  function movedNotably() {
    const pos = graph.pos;
    if (!drawnPos || drawnPos.length !== 2 * graph.nodes.length) return true;
    const limit = NOTABLE_PX / map.scale;
    for (let i = 0; i < graph.nodes.length; i++) {
      if (!graph.nodeVisible[i]) continue;
      if (Math.abs(pos[2 * i] - drawnPos[2 * i]) >= limit || Math.abs(pos[2 * i + 1] - drawnPos[2 * i + 1]) >= limit) return true;
    }
    return false;
  }

  // The dots' bitmap (device pixels) and the mapping, from the positions as they are now.
  function drawDots() {
    dotsFrame = 0;
    dotsDirty = false;
    lastDots = performance.now();
    if (!dotsForced && !movedNotably()) return;
    dotsForced = false;
    drawnPos = graph.pos.slice(0, 2 * graph.nodes.length);
    computeBounds();
    measure();
    dots.width = canvas.width;
    dots.height = canvas.height;
    dotsVersion += 1;
    if (!bounds) return;
    const spanX = Math.max(1, bounds.x1 - bounds.x0);
    const spanY = Math.max(1, bounds.y1 - bounds.y0);
    const scale = Math.min((width - 2 * PADDING) / spanX, (height - 2 * PADDING) / spanY);
    map = {
      scale,
      ox: (width - scale * spanX) / 2 - scale * bounds.x0,
      oy: (height - scale * spanY) / 2 - scale * bounds.y0,
    };
    container.dataset.scale = String(map.scale);
    container.dataset.ox = String(map.ox);
    container.dataset.oy = String(map.oy);
    const w = dots.width;
    const h = dots.height;
    const image = dotsCtx.createImageData(w, h);
    const data = image.data;
    // (a few hundred dots can be 3 pixels wide; thousands would merge into a blot)
    const size = Math.max(2, Math.round((graph.visibleCount > 2000 ? 2 : 3) * dpr));
    const pos = graph.pos;
    for (let i = 0; i < graph.nodes.length; i++) {
      if (!graph.nodeVisible[i]) continue;
      const px = Math.round((pos[2 * i] * map.scale + map.ox) * dpr - size / 2);
      const py = Math.round((pos[2 * i + 1] * map.scale + map.oy) * dpr - size / 2);
      const [r, g, b] = colourOf(graph.nodes[i]);
      for (let y = Math.max(0, py); y < Math.min(h, py + size); y++) {
        for (let x = Math.max(0, px); x < Math.min(w, px + size); x++) {
          const o = 4 * (y * w + x);
          data[o] = r;
          data[o + 1] = g;
          data[o + 2] = b;
          data[o + 3] = 255;
        }
      }
    }
    dotsCtx.putImageData(image, 0, 0);
    drawFrame(true);
  }

  // The share of the graph's bounds the canvas shows now (1 when it shows all of it).
  function coverage() {
    if (!bounds) return 1;
    const { width: w, height: h } = renderer.size();
    const [vx0, vy0] = renderer.worldOf(0, 0);
    const [vx1, vy1] = renderer.worldOf(w, h);
    const spanX = bounds.x1 - bounds.x0;
    const spanY = bounds.y1 - bounds.y0;
    const inX = spanX > 0 ? Math.max(0, Math.min(vx1, bounds.x1) - Math.max(vx0, bounds.x0)) / spanX : Number(vx0 <= bounds.x0 && bounds.x0 <= vx1);
    const inY = spanY > 0 ? Math.max(0, Math.min(vy1, bounds.y1) - Math.max(vy0, bounds.y0)) / spanY : Number(vy0 <= bounds.y0 && bounds.y0 <= vy1);
    return inX * inY;
  }

  function updateShown() {
    const share = coverage();
    if (!needed && share < SHOW_BELOW) needed = true;
    else if (needed && share > HIDE_ABOVE && !pressed) needed = false;
    const hidden = !(wanted && needed && bounds);
    if (container.hidden !== hidden) {
      container.hidden = hidden;
      if (!hidden) {
        drawn = "";
        if (dotsDirty) drawDots();
      }
    }
    return !hidden;
  }

  // The dots' bitmap and the view's rectangle: cheap enough for every view change.
  function drawFrame(force = false) {
    if (!updateShown()) return;
    const t = renderer.transform;
    const { width: w, height: h } = renderer.size();
    const key = `${dotsVersion},${t.k},${t.x},${t.y},${w},${h}`;
    if (!force && key === drawn) return;
    drawn = key;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(dots, 0, 0);
    const [vx0, vy0] = renderer.worldOf(0, 0);
    const [vx1, vy1] = renderer.worldOf(w, h);
    const x = vx0 * map.scale + map.ox;
    const y = vy0 * map.scale + map.oy;
    const rw = (vx1 - vx0) * map.scale;
    const rh = (vy1 - vy0) * map.scale;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "rgba(47, 95, 208, 0.08)";
    ctx.fillRect(x, y, rw, rh);
    ctx.strokeStyle = VIEW_COLOUR;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(x, y, Math.max(2, rw), Math.max(2, rh));
  }

  // Redraw the dots: soon when `urgent` (what is shown changed), else at most every DOTS_MS.
  function scheduleDots(urgent) {
    dotsDirty = true;
    if (urgent) dotsForced = true;
    if (!wanted) return;
    if (dotsFrame) return;
    const wait = urgent ? 0 : DOTS_MS - (performance.now() - lastDots);
    if (wait <= 0) {
      clearTimeout(dotsTimer);
      dotsTimer = 0;
      dotsFrame = requestAnimationFrame(drawDots);
    } else if (!dotsTimer) {
      dotsTimer = setTimeout(() => {
        dotsTimer = 0;
        if (!dotsFrame) dotsFrame = requestAnimationFrame(drawDots);
      }, wait);
    }
  }

  // --- moving the view from the minimap ---------------------------------------------------------

  function moveTo(event) {
    const rect = canvas.getBoundingClientRect();
    const mx = event.clientX - rect.left;
    const my = event.clientY - rect.top;
    const x = (mx - map.ox) / map.scale;
    const y = (my - map.oy) / map.scale;
    const { width: w, height: h } = renderer.size();
    const k = renderer.transform.k;
    interactions.zoomTo(zoomIdentity.translate(w / 2 - k * x, h / 2 - k * y).scale(k), { duration: 0 });
  }

  canvas.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || !bounds) return;
    event.preventDefault();
    pressed = true;
    canvas.setPointerCapture(event.pointerId);
    if (onMove) onMove();
    moveTo(event);
  });
  canvas.addEventListener("pointermove", (event) => {
    if (pressed) moveTo(event);
  });
  const release = () => {
    if (!pressed) return;
    pressed = false;
    drawFrame(true);
  };
  canvas.addEventListener("pointerup", release);
  canvas.addEventListener("pointercancel", release);

  // --- showing and hiding -------------------------------------------------------------------------

  function setWanted(next) {
    wanted = next;
    toggle.setAttribute("aria-pressed", String(wanted));
    remember(wanted);
    if (wanted) scheduleDots(true);
    else container.hidden = true;
  }
  toggle.setAttribute("aria-pressed", String(wanted));
  toggle.addEventListener("click", () => setWanted(!wanted));

  store.on("structure", () => scheduleDots(true));
  store.on("visibility", () => scheduleDots(true));
  store.on("attributes", () => scheduleDots(true));
  store.on("view", (detail) => detail && detail.colours && scheduleDots(true));
  store.on("positions", () => scheduleDots(false));
  // Every frame the renderer draws may come from a moved view: redraw the frame if so.
  renderer.onDraw(() => {
    if (wanted) drawFrame();
  });
  container.hidden = true;

  return {
    get shown() {
      return !container.hidden;
    },
    setWanted,
  };
}
