// Django's CSRF token, read from its cookie (readable on purpose): every request that is
// not a GET sends it as X-CSRFToken, whether htmx (csrf.js) or fetch (graph/api.js) makes it.
export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}
