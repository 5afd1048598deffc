// Sends Django's CSRF token with every htmx request (the cookie is readable on purpose).
function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export function initCsrf() {
  document.body.addEventListener("htmx:configRequest", (event) => {
    event.detail.headers["X-CSRFToken"] = csrfToken();
  });
}

initCsrf();
