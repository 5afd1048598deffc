// The layout's own behaviour: the workspace switcher submits when a workspace is chosen.
export function initLayout() {
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.requestSubmit());
  }
}

initLayout();
