// Small DOM builders shared by the sidebar lists (nodes in view, hubs, sources, path
// steps): a list item holding a button that carries an id. Text goes in with textContent
// only — names come from documents and are hostile.

export function idButtonItem({ id, text = "", className = "link" }) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.className = className;
  button.dataset.id = String(id);
  button.textContent = text;
  li.append(button);
  return { li, button };
}
