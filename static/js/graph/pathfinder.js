// The path finder: two entities picked by typeahead, the API's shortest path between
// them (up to the server's limit of steps, direction ignored), drawn over the graph and listed in words.

import { initTypeahead } from "./search.js";
import { idButtonItem } from "./elements.js";

export function initPathfinder({ maxHops, form, fromInput, fromList, toInput, toList, clearButton, result, api, onPath, onClear, onStep }) {
  const from = initTypeahead({ input: fromInput, listbox: fromList, api, onPick: () => toInput.focus() });
  const to = initTypeahead({ input: toInput, listbox: toList, api, onPick: () => {} });

  function say(text) {
    result.replaceChildren();
    const p = document.createElement("p");
    p.textContent = text;
    result.append(p);
  }

  function show(payload) {
    result.replaceChildren();
    const p = document.createElement("p");
    p.textContent = payload.length === 0 ? "The same entity." : `A path of ${payload.length} step${payload.length === 1 ? "" : "s"}:`;
    const list = document.createElement("ol");
    list.className = "path-steps";
    for (const node of payload.nodes) {
      list.append(idButtonItem({ id: node.id, text: node.name }).li);
    }
    result.append(p, list);
  }

  result.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-id]");
    if (button) onStep(Number(button.dataset.id));
  });

  async function find(fromId, toId) {
    say("Searching…");
    try {
      const payload = await api.path(fromId, toId, { maxHops: maxHops });
      if (!payload.found) {
        say(`No path within ${maxHops} steps.`);
        onPath(null, [fromId, toId]);
        return;
      }
      const first = payload.nodes[0];
      const last = payload.nodes[payload.nodes.length - 1];
      from.set(first);
      to.set(last);
      show(payload);
      onPath(payload, [fromId, toId]);
    } catch (error) {
      say(error.message);
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const a = from.picked;
    const b = to.picked;
    if (!a || !b) {
      say("Pick both ends from the suggestions first.");
      return;
    }
    find(a.id, b.id);
  });

  clearButton.addEventListener("click", () => {
    from.set(null);
    to.set(null);
    result.replaceChildren();
    onClear();
  });

  return { find };
}
