// The community map's breadcrumb above the stage: "All communities › <3> › <3.2>". Every
// crumb but the last is a button that goes back up to that level; the last says where the
// view is (aria-current). Labels are community names made of entity names (documents are
// hostile): they go in with textContent only.

const ROOT = "All communities";
const MAX_LABEL = 60;

function shorten(text) {
  const value = String(text || "");
  return value.length > MAX_LABEL ? `${value.slice(0, MAX_LABEL - 1)}…` : value;
}

// The keys from the top down to `key`: "3.2.1" -> ["3", "3.2", "3.2.1"].
export function ancestry(key) {
  if (!key) return [];
  const parts = key.split(".");
  return parts.map((_, i) => parts.slice(0, i + 1).join("."));
}

export function initBreadcrumb({ nav, onPick }) {
  const list = document.createElement("ol");
  nav.replaceChildren(list);

  // trail: [{key, label}] from the top level down (the root crumb is added here); null hides it.
  function show(trail) {
    if (!trail) {
      nav.hidden = true;
      list.replaceChildren();
      return;
    }
    const crumbs = [{ key: null, label: ROOT }, ...trail];
    const items = crumbs.map((crumb, i) => {
      const li = document.createElement("li");
      const last = i === crumbs.length - 1;
      const element = document.createElement(last ? "span" : "button");
      element.textContent = shorten(crumb.label);
      element.title = String(crumb.label || "");
      if (last) {
        element.setAttribute("aria-current", "location");
      } else {
        element.type = "button";
        element.className = "crumb";
        element.dataset.key = crumb.key === null ? "" : crumb.key;
      }
      li.append(element);
      return li;
    });
    list.replaceChildren(...items);
    nav.hidden = false;
  }

  list.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-key]");
    if (button) onPick(button.dataset.key || null);
  });

  return { show };
}
