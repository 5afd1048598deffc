// The Entities page: names open the entity panel in the side panel (htmx, hx-target="#panel";
// closing and focus as on the Ask page), and a change made in the panel (a curation control)
// reloads the table, whose rows it may have changed. The table, its sorting, filters, export
// and bulk actions are plain HTML and forms: they work without this script.
import { initAskPanel } from "../ask/panel.js";

const panel = document.getElementById("panel");
if (panel) initAskPanel(panel);

document.body.addEventListener("graphloom:graph-changed", () => {
  if (!document.getElementById("entities-results") || !window.htmx) return;
  window.htmx.ajax("GET", window.location.href, {
    target: "#entities-results",
    select: "#entities-results",
    swap: "outerHTML",
  });
});
