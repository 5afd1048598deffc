// Finding entities by name: a typeahead (an ARIA combobox over the entities API's word
// search, which also matches aliases) used by the search box and by both ends of the path
// finder. Results are written with textContent: names come from documents.

const DEBOUNCE_MS = 150;

export function initTypeahead({ input, listbox, api, onPick, limit = 8 }) {
  let items = [];
  let active = -1;
  let timer = 0;
  let controller = null;
  let picked = null;

  function close() {
    listbox.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
  }

  function render(message) {
    listbox.replaceChildren();
    if (message) {
      const li = document.createElement("li");
      li.className = "typeahead-empty";
      li.setAttribute("aria-disabled", "true");
      li.textContent = message;
      listbox.append(li);
    }
    items.forEach((item, i) => {
      const li = document.createElement("li");
      li.id = `${listbox.id}-${i}`;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", i === active ? "true" : "false");
      li.dataset.index = String(i);
      const name = document.createElement("span");
      name.className = "option-name";
      name.textContent = item.name;
      const meta = document.createElement("span");
      meta.className = "option-meta";
      meta.textContent = `${item.type} · ${item.degree}`;
      li.append(name, meta);
      listbox.append(li);
    });
    listbox.hidden = false;
    input.setAttribute("aria-expanded", "true");
  }

  function setActive(i) {
    active = items.length ? (i + items.length) % items.length : -1;
    for (const li of listbox.querySelectorAll("[role=option]")) {
      li.setAttribute("aria-selected", Number(li.dataset.index) === active ? "true" : "false");
    }
    if (active >= 0) {
      input.setAttribute("aria-activedescendant", `${listbox.id}-${active}`);
      const li = document.getElementById(`${listbox.id}-${active}`);
      if (li) li.scrollIntoView({ block: "nearest" });
    }
  }

  async function lookup(q) {
    if (controller) controller.abort();
    controller = new AbortController();
    try {
      const page = await api.searchEntities(q, { limit, signal: controller.signal });
      items = page.items || [];
      active = items.length ? 0 : -1;
      render(items.length ? "" : "No entity matches that.");
      setActive(active);
    } catch (error) {
      if (error.name === "AbortError") return;
      items = [];
      render(error.message);
    }
  }

  function pick(item) {
    picked = item;
    input.value = item.name;
    input.dataset.entityId = String(item.id);
    close();
    onPick(item);
  }

  input.addEventListener("input", () => {
    picked = null;
    delete input.dataset.entityId;
    clearTimeout(timer);
    const q = input.value.trim();
    if (!q) {
      items = [];
      close();
      return;
    }
    timer = setTimeout(() => lookup(q), DEBOUNCE_MS);
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") {
      if (listbox.hidden && items.length) render("");
      setActive(active + 1);
    } else if (event.key === "ArrowUp") {
      setActive(active - 1);
    } else if (event.key === "Enter") {
      if (!listbox.hidden && items[active]) pick(items[active]);
      else if (!listbox.hidden && items.length) pick(items[0]);
      else if (input.value.trim() && !picked) lookup(input.value.trim());
      else return;
    } else if (event.key === "Escape") {
      if (listbox.hidden) return;
      close();
    } else {
      return;
    }
    event.preventDefault();
  });

  // mousedown, not click: a click would blur the input (closing the list) first.
  listbox.addEventListener("mousedown", (event) => {
    const li = event.target.closest("[role=option]");
    if (!li) return;
    event.preventDefault();
    pick(items[Number(li.dataset.index)]);
  });

  input.addEventListener("blur", () => setTimeout(close, 100));

  return {
    get picked() {
      return picked;
    },
    set(item) {
      picked = item;
      input.value = item ? item.name : "";
      if (item) input.dataset.entityId = String(item.id);
      else delete input.dataset.entityId;
    },
  };
}

// The search box: picking an entity focuses it in the graph.
export function initSearch({ input, listbox, api, onPick }) {
  return initTypeahead({ input, listbox, api, onPick });
}
