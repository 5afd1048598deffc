// A measuring hook for bench/explorer.py, present only when the page is opened with
// ?bench=1: when the first nodes were drawn and when the layout settled (milliseconds
// since navigation started, performance.now()), and a frame counter
// (requestAnimationFrame callbacks, and how many of those frames drew the graph) to run
// while the benchmark pans and drags with the real mouse, with what a drawn frame cost;
// browser tests read what the last frame drew of the edges through it too.

import { zoomIdentity } from "../../vendor/d3.js";
import { radiusFor } from "./render.js";

export function initPerf({ enabled, store, renderer, simulation, interactions }) {
  if (!enabled) return null;
  const marks = { dataLoaded: null, firstPaint: null, settled: null };
  let counting = null;

  const context = renderer.canvas.getContext("2d");
  renderer.onDraw((stats) => {
    if (marks.firstPaint === null && store.graph.nodes.length) marks.firstPaint = performance.now();
    if (!counting) return;
    counting.draws += 1;
    counting.drawMs += stats.lastDrawMs;
    // Reading a pixel makes the canvas rasterise now, so the time includes the pixels,
    // not only the drawing calls (the same work the browser would do at the next paint).
    const started = performance.now();
    context.getImageData(0, 0, 1, 1);
    counting.frameMs += stats.lastDrawMs + performance.now() - started;
  });
  simulation.onSettled(() => {
    if (marks.settled === null && store.graph.nodes.length) marks.settled = performance.now();
  });
  store.on("structure", () => {
    if (marks.dataLoaded === null && store.graph.nodes.length) marks.dataLoaded = performance.now();
  });

  const hook = {
    marks,
    counts: () => ({ nodes: store.graph.nodes.length, edges: store.graph.edges.length }),
    // The screen position (CSS pixels in the canvas) of the best-connected visible node.
    hubOnScreen() {
      let best = -1;
      store.graph.nodes.forEach((node, i) => {
        if (store.graph.nodeVisible[i] && (best < 0 || node.degree > store.graph.nodes[best].degree)) best = i;
      });
      return best < 0 ? null : renderer.screenOf(best);
    },
    // The visible node under the best-connected one's centre (itself, unless another was
    // drawn over it): id, name, screen position and radius (browser tests click and drag it).
    hub() {
      const at = hook.hubOnScreen();
      if (!at) return null;
      const i = renderer.hitNode(at[0], at[1], 0);
      if (i < 0) return null;
      const node = store.graph.nodes[i];
      const [wx, wy] = renderer.worldOf(at[0], at[1]);
      return { id: node.id, name: node.name, x: at[0], y: at[1], r: radiusFor(node.degree) * renderer.transform.k, world: [wx, wy] };
    },
    // A loaded node's centre on the canvas (CSS pixels), on screen or not: [x, y] or null.
    screenOf(id) {
      const i = store.indexOf(id);
      return i === undefined ? null : renderer.screenOf(i);
    },
    scale: () => renderer.transform.k,
    // Frames drawn from a drag's still layer, and draws of that layer (render.js).
    layers: () => ({ ...renderer.stats.layers }),
    // The colour of the canvas at a point (CSS pixels): [r, g, b].
    pixel(x, y) {
      const ratio = renderer.canvas.width / renderer.size().width;
      const data = context.getImageData(Math.round(x * ratio), Math.round(y * ratio), 1, 1).data;
      return [data[0], data[1], data[2]];
    },
    // A point of the canvas with no node under it, to press on and pan from.
    emptyPoint() {
      const { width, height } = renderer.size();
      for (let radius = 0; radius < Math.max(width, height) / 2; radius += 20) {
        for (let a = 0; a < 16; a++) {
          const x = width / 2 + radius * Math.cos((a * Math.PI) / 8);
          const y = height / 2 + radius * Math.sin((a * Math.PI) / 8);
          if (x > 100 && y > 100 && x < width - 200 && y < height - 200 && renderer.hitNode(x, y, 8) < 0) return [x, y];
        }
      }
      return null;
    },
    // The edges' arrowheads and type labels the last frame drew (render.js record()).
    drawn: () => renderer.record(),
    edges: () => store.graph.edges.map((e) => ({ id: e.id, source: e.source, target: e.target })),
    fit() {
      interactions.fit(undefined, { duration: 0 });
    },
    // Centre the best-connected visible node at scale k (close enough for the edges' details).
    zoomOnHub(k) {
      const [x, y] = renderer.worldOf(...hook.hubOnScreen());
      const { width, height } = renderer.size();
      interactions.zoomTo(zoomIdentity.translate(width / 2 - k * x, height / 2 - k * y).scale(k), { duration: 0 });
    },
    startFrames() {
      counting = { frames: 0, draws: 0, drawMs: 0, frameMs: 0, started: performance.now(), running: true };
      const state = counting;
      const tick = () => {
        if (!state.running) return;
        state.frames += 1;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    },
    stopFrames() {
      const state = counting;
      counting = null;
      if (!state) return null;
      state.running = false;
      const seconds = (performance.now() - state.started) / 1000;
      return {
        seconds,
        frames: state.frames,
        draws: state.draws,
        fps: state.frames / seconds,
        draws_per_second: state.draws / seconds,
        mean_draw_ms: state.draws ? state.drawMs / state.draws : null,
        mean_draw_and_raster_ms: state.draws ? state.frameMs / state.draws : null,
      };
    },
  };
  window.graphloomBench = hook;
  return hook;
}
