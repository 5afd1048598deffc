// Drag and drop for the upload form. Dropped files are put into the form's own
// <input type=file multiple>, so one submission path serves both (and the input alone works
// without this script); a drop sends the form at once, a pick from the dialog waits for the
// button. The chosen files are listed by name (and their modification times put in the
// form), and htmx's upload progress drives the bar.
// Listeners sit on the document because htmx replaces the form after every upload.

function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function listFiles(zone, files) {
  const list = zone.querySelector("[data-file-list]");
  if (!list) return;
  const items = Array.from(files, (file) => {
    const item = document.createElement("li");
    item.textContent = `${file.name} (${formatSize(file.size)})`; // names are data: text only
    return item;
  });
  list.replaceChildren(...items);
}

// Browsers send a file's bytes and name, not its modification time: the form's hidden
// `last_modified` field carries each file's File.lastModified (milliseconds since 1970, in
// the files' order), which becomes the document's date unless its content states one.
function stampDates(input) {
  const field = input.form?.querySelector('input[name="last_modified"]');
  if (field) field.value = Array.from(input.files || [], (file) => String(file.lastModified || "")).join(",");
}

function zoneOf(event) {
  return event.target instanceof Element ? event.target.closest("[data-dropzone]") : null;
}

function carriesFiles(event) {
  return Boolean(event.dataTransfer && Array.from(event.dataTransfer.types).includes("Files"));
}

export function initUpload(root = document) {
  root.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    // Also outside the zone: a file dropped a little off target must not replace the page.
    event.preventDefault();
    const zone = zoneOf(event);
    event.dataTransfer.dropEffect = zone ? "copy" : "none";
    zone?.classList.add("dragging");
  });
  root.addEventListener("dragleave", (event) => {
    const zone = zoneOf(event);
    if (zone && !(event.relatedTarget instanceof Node && zone.contains(event.relatedTarget))) {
      zone.classList.remove("dragging");
    }
  });
  root.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    const zone = zoneOf(event);
    if (!zone) return;
    zone.classList.remove("dragging");
    const input = zone.querySelector('input[type="file"]');
    const files = event.dataTransfer.files;
    if (!input || files.length === 0) return;
    input.files = files;
    listFiles(zone, files);
    stampDates(input);
    input.form.requestSubmit();
  });
  root.addEventListener("change", (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || input.type !== "file") return;
    const zone = input.closest("[data-dropzone]");
    if (zone) listFiles(zone, input.files);
    stampDates(input);
  });
  root.addEventListener("htmx:xhr:progress", (event) => {
    const form = event.target instanceof Element ? event.target.closest("[data-upload-form]") : null;
    const bar = form?.querySelector("[data-upload-progress]");
    if (bar && event.detail.lengthComputable && event.detail.total > 0) {
      bar.value = Math.round((100 * event.detail.loaded) / event.detail.total);
    }
  });
}

initUpload();
