// Sends Django's CSRF token with every htmx request.
import { csrfToken } from "./csrf-token.js";

export function initCsrf() {
  document.body.addEventListener("htmx:configRequest", (event) => {
    event.detail.headers["X-CSRFToken"] = csrfToken();
  });
}

initCsrf();
