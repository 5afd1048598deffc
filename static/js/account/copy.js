// Copy buttons for secrets shown once (a new API token): one press puts the secret on the
// clipboard. Where the Clipboard API is missing or refused (plain http on another host, a
// denied permission) the secret is selected instead so Ctrl+C / ⌘C copies it; the outcome
// is announced in a status region, since a silent button leaves people unsure.
//
// Markup: <button data-copy="ID-of-input" data-copy-status="ID-of-status" hidden>; the
// button stays hidden without scripts, where the read-only field can be copied by hand.

function say(status, text) {
  if (status) status.textContent = text;
}

function selectSecret(source) {
  source.focus();
  source.select();
}

async function copy(source, status) {
  try {
    if (!window.isSecureContext || !navigator.clipboard) throw new Error("no clipboard");
    await navigator.clipboard.writeText(source.value);
    say(status, "Copied to the clipboard.");
  } catch {
    selectSecret(source);
    say(status, "Selected: press Ctrl+C (⌘C on a Mac) to copy it.");
  }
}

export function initCopyButtons(root = document) {
  for (const button of root.querySelectorAll("button[data-copy]")) {
    const source = document.getElementById(button.dataset.copy);
    if (!source) continue;
    const status = document.getElementById(button.dataset.copyStatus || "");
    button.hidden = false;
    button.addEventListener("click", () => copy(source, status));
  }
  // A click in the field selects the whole secret: a partial copy is a broken token.
  for (const source of root.querySelectorAll("input.secret[readonly]")) {
    source.addEventListener("focus", () => source.select());
  }
}

initCopyButtons();
