// The Ask page's details panel (#panel): entity and relation chips load their panels here
// with htmx (hx-get, hx-target="#panel"; the href still opens the panel as a page without
// a script). Escape or the close button restores the placeholder.

export function initAskPanel(panel) {
  const empty = [...panel.childNodes].map((node) => node.cloneNode(true));

  function close() {
    panel.replaceChildren(...empty.map((node) => node.cloneNode(true)));
  }

  panel.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target !== panel) return;
    const heading = panel.querySelector("#panel-title");
    if (heading) heading.focus();
  });
  panel.addEventListener("click", (event) => {
    if (event.target.closest("[data-panel-close]")) close();
  });
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !event.target.closest("input, textarea, select")) close();
  });
}
