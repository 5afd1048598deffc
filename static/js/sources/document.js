// The document page opened from an evidence link: bring the marked passage into view and
// give it the focus, so keyboard and screen-reader users start reading where the evidence is.
export function initHighlight() {
  const mark = document.getElementById("highlight");
  if (!mark) return;
  mark.scrollIntoView({ block: "center" });
  mark.focus({ preventScroll: true });
}

initHighlight();
