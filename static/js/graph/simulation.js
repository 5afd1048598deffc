// The page's side of the force layout: hands the loaded graph to the layout worker
// (layout-worker.js) whenever it changes, copies the positions it sends back into the
// store, and relays drags. The canvas carries `data-layout="running|settled"` so people
// (and tests) can tell when the picture has stopped moving. Pinned nodes (store.view.pinned,
// set from the context menu) are held where they are by the worker, across graph changes.
// While a local drag lasts, "positions" names the nodes that may move ({moving, movingId}
// from the worker), so the renderer can reuse a picture of all the others.
// While a saved layout is restored (layouts.js: hold(placer)), every graph change is
// placed by the placer instead and nothing simulates: the worker keeps the positions
// without ticking and the canvas says "settled" at once. After release(), the picture
// stays still until the next change, a drag or rerun().

export function initSimulation({ workerUrl, store, canvas, onError }) {
  const graph = store.graph;
  const worker = new Worker(workerUrl, { type: "module" });
  let version = 0;
  let dragged = -1;
  let draggedAt = null;
  let first = true;
  let moving = null; // {moving, movingId} of the local drag under way, or null
  let placer = null; // while a saved layout is restored: (graph) => void places every node
  const settledListeners = [];

  function send({ alpha } = {}) {
    version += 1;
    const sent = version;
    const n = graph.nodes.length;
    const frozen = Boolean(placer && n);
    if (frozen) {
      placer(graph);
      store.emit("positions");
    }
    const links = new Uint32Array(graph.edges.length * 2);
    const weights = new Float32Array(graph.edges.length);
    graph.edges.forEach((edge, j) => {
      links[2 * j] = edge.s;
      links[2 * j + 1] = edge.t;
      weights[j] = edge.weight;
    });
    const pos = graph.pos.slice(0, n * 2);
    const pinned = Int32Array.from([...store.view.pinned].map((id) => graph.index.get(id)).filter((i) => i !== undefined));
    canvas.dataset.layout = n ? (frozen ? "settled" : "running") : "idle";
    worker.postMessage({ type: "graph", version, pos, links, weights, pinned, frozen, alpha: alpha ?? (first ? 1 : 0.35) }, [
      pos.buffer,
      links.buffer,
      weights.buffer,
    ]);
    first = false;
    dragged = -1;
    moving = null;
    // Restored, so settled: what waits for a settled layout (fitting it, saving it) runs.
    if (frozen) setTimeout(() => version === sent && notifySettled(), 0);
  }

  function notifySettled() {
    for (const listener of settledListeners) listener();
  }

  // The moving set still holds while the pointer drags its first node (the dragged one).
  function movingWith(index) {
    return moving && moving.moving[0] === index ? moving : null;
  }

  worker.onmessage = ({ data }) => {
    if (data.type !== "tick" || data.version !== version) return; // an answer about an older graph
    if (data.pos.length !== graph.nodes.length * 2) return;
    graph.pos.set(data.pos);
    if (dragged >= 0 && draggedAt) {
      graph.pos[2 * dragged] = draggedAt[0];
      graph.pos[2 * dragged + 1] = draggedAt[1];
    }
    moving = data.moving ? { moving: data.moving, movingId: data.movingId } : null;
    store.emit("positions", moving);
    const state = data.settled ? "settled" : "running";
    if (canvas.dataset.layout !== state) {
      canvas.dataset.layout = state;
      if (data.settled) notifySettled();
    }
  };
  worker.onerror = (event) => {
    event.preventDefault();
    canvas.dataset.layout = "failed";
    if (onError) onError(event.message || "The layout could not run.");
  };

  store.on("structure", (detail) => {
    if (detail && detail.cleared) first = true;
    send();
  });

  store.on("pins", ({ id, pinned }) => {
    const index = graph.index.get(id);
    if (index !== undefined) worker.postMessage({ type: "pin", index, pinned });
  });

  // Pages the browser may keep in its back/forward cache stop their layout too.
  window.addEventListener("pagehide", stop);

  function stop() {
    worker.postMessage({ type: "stop" });
    worker.terminate();
  }

  return {
    dragStart(index, x, y) {
      dragged = index;
      draggedAt = [x, y];
      graph.pos[2 * index] = x;
      graph.pos[2 * index + 1] = y;
      canvas.dataset.layout = "running";
      worker.postMessage({ type: "drag", index, x, y });
      store.emit("positions", movingWith(index));
    },
    drag(index, x, y) {
      draggedAt = [x, y];
      graph.pos[2 * index] = x;
      graph.pos[2 * index + 1] = y;
      worker.postMessage({ type: "drag", index, x, y });
      store.emit("positions", movingWith(index));
    },
    dragEnd(index) {
      dragged = -1;
      draggedAt = null;
      worker.postMessage({ type: "release", index });
    },
    onSettled(listener) {
      settledListeners.push(listener);
    },
    // Restoring a saved layout (layouts.js): graph changes are placed, not simulated.
    hold(place) {
      placer = place;
    },
    release() {
      placer = null;
    },
    get held() {
      return placer !== null;
    },
    // "Re-run layout": the whole graph simulated again from where it is drawn.
    rerun() {
      placer = null;
      if (graph.nodes.length) send({ alpha: 1 });
    },
    stop,
  };
}
