// The paste-text form: a text longer than the server takes (data-max-chars on the text
// area, INGEST_MAX_PASTE_CHARS) is said next to the field before anything is sent. The
// server checks the same limit, but a request beyond what it reads at all is refused
// before the form is seen, with no message a person could act on. Listening on the
// document in the capture phase runs before htmx's own submit handler, and keeps working
// after htmx replaces the form.

function tooLong(area) {
  const limit = Number(area.dataset.maxChars);
  if (!Number.isFinite(limit) || limit <= 0) return 0;
  // Characters as the server counts them (code points; the browser sends \r\n, counted once).
  const length = Array.from(area.value).length;
  return length > limit ? length : 0;
}

export function initPaste(root = document) {
  root.addEventListener(
    "submit",
    (event) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.matches("[data-paste-form]")) return;
      const area = form.querySelector("textarea[data-max-chars]");
      const problem = form.querySelector("[data-paste-too-long]");
      if (!area || !problem) return;
      const length = tooLong(area);
      problem.hidden = !length;
      if (!length) {
        area.removeAttribute("aria-invalid");
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
      const limit = Number(area.dataset.maxChars);
      problem.textContent =
        `The text is ${length.toLocaleString("en")} characters; at most ` +
        `${limit.toLocaleString("en")} can be pasted at once. Split it, or upload it as a file.`;
      area.setAttribute("aria-invalid", "true");
      area.focus();
    },
    true,
  );
}

initPaste();
