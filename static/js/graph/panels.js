// The details panel (#panel): server-rendered entity and relation panels swapped in by
// htmx, so their text is escaped by Django's templates, never assembled here. Opening a
// panel moves keyboard focus to its heading; Escape or the close button gives it back to
// the canvas. Whatever a panel shows becomes the graph's selection (links inside a panel
// move the selection too), which is how the URL remembers it.

export function initPanels({ panel, api, store, canvas, onEntityShown, onExpand }) {
  const empty = [...panel.childNodes].map((node) => node.cloneNode(true)); // the placeholder
  let focusAfterSwap = true;
  let quietAfterSwap = false;

  // focus: move keyboard focus to the panel; quiet: leave the view where it is (a view
  // restored from its URL keeps its zoom).
  function load(url, { focus = true, quiet = false } = {}) {
    focusAfterSwap = focus;
    quietAfterSwap = quiet;
    panel.setAttribute("aria-busy", "true");
    return window.htmx.ajax("GET", url, { target: panel, swap: "innerHTML" });
  }

  function openEntity(id, options) {
    const shown = panel.querySelector("[data-panel-entity]");
    if (shown && Number(shown.dataset.panelEntity) === id && !(options && options.reload)) {
      store.select(id);
      if (!options || options.focus !== false) focusHeading();
      return Promise.resolve();
    }
    store.select(id);
    return load(api.entityPanelUrl(id), options);
  }

  function openRelation(id, options) {
    store.selectEdge(id);
    return load(api.relationPanelUrl(id), options);
  }

  function close() {
    panel.replaceChildren(...empty.map((node) => node.cloneNode(true)));
    store.select(null);
    canvas.focus();
  }

  function focusHeading() {
    const heading = panel.querySelector("#panel-title");
    if (heading) heading.focus();
  }

  panel.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target !== panel) return;
    panel.removeAttribute("aria-busy");
    const entity = panel.querySelector("[data-panel-entity]");
    const relation = panel.querySelector("[data-panel-relation]");
    if (entity) {
      const id = Number(entity.dataset.panelEntity);
      store.select(id);
      onEntityShown(id, entity.dataset.panelState || "active", { quiet: quietAfterSwap });
    } else if (relation) {
      store.selectEdge(Number(relation.dataset.panelRelation));
    }
    // A control that failed asks for focus itself (autofocus on the field with the error).
    const wantsFocus = panel.querySelector("[autofocus]");
    if (wantsFocus) wantsFocus.focus();
    else if (focusAfterSwap) focusHeading();
    focusAfterSwap = true;
    quietAfterSwap = false;
  });
  panel.addEventListener("htmx:responseError", () => panel.removeAttribute("aria-busy"));

  panel.addEventListener("click", (event) => {
    const closer = event.target.closest("[data-panel-close]");
    if (closer) {
      close();
      return;
    }
    const expand = event.target.closest("[data-expand]");
    if (expand) onExpand(Number(expand.dataset.expand));
  });

  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !event.target.closest("input, textarea, select")) {
      event.preventDefault();
      close();
    }
  });

  return { openEntity, openRelation, close };
}
