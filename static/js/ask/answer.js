// The streamed answer on the Ask page (templates/explorer/ask/ask.html, #ask-answer): the
// question and the page's filters are POSTed to the ask API asking for server-sent events
// (fetch and a ReadableStream: EventSource cannot POST). The model's text is shown as it
// arrives as text nodes only; each [n] becomes a link once its citation event has
// vouched for it; on `done` the streamed text gives way to the answer the server rendered
// and cleaned by its allow-list (`answer_html`), the one piece of HTML this page inserts.
import { csrfToken } from "../csrf-token.js";

// A citation marker as the server writes them: [1] or [1, 2].
const MARKER = /\[(\s*\d{1,4}\s*(?:,\s*\d{1,4}\s*)*)\]/g;

// The events of a server-sent stream, parsed from its text as it arrives.
export function eventParser(onEvent) {
  let buffer = "";
  return (chunk) => {
    buffer += chunk.replace(/\r\n?/g, "\n");
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
      end = buffer.indexOf("\n\n");
    }
  };
}

async function errorDetail(response) {
  try {
    const data = await response.json();
    if (data && typeof data.detail === "string") return data.detail;
    if (data && data.error && data.error.message) return data.error.message;
  } catch {
    // not JSON: the status line says it
  }
  return `The answer failed: ${response.status} ${response.statusText}`;
}

export function initAnswer(root, { onPassages, onCitation, onCite }) {
  const d = root.dataset;
  const status = root.querySelector(".answer-status");
  const text = root.querySelector(".answer-text");
  const alert = root.querySelector(".answer-error");
  const warnings = root.querySelector(".answer-warnings");
  const citations = new Map(); // n -> the citation event's object
  let streamed = null; // the paragraph holding the text as it arrives
  let finished = false;

  function citeLink(n) {
    const link = document.createElement("a");
    link.className = "cite";
    link.href = `#passage-${n}`;
    link.dataset.n = String(n);
    link.textContent = `[${n}]`;
    return link;
  }

  // Markers in the streamed text whose numbers have a citation become links.
  function linkify() {
    if (!streamed) return;
    const nodes = [...streamed.childNodes].filter((node) => node.nodeType === Node.TEXT_NODE);
    for (const node of nodes) {
      const value = node.nodeValue;
      const parts = [];
      let last = 0;
      for (const match of value.matchAll(MARKER)) {
        const numbers = match[1].split(",").map((part) => Number(part.trim()));
        if (!numbers.some((n) => citations.has(n))) continue;
        parts.push(document.createTextNode(value.slice(last, match.index)));
        for (const n of numbers) parts.push(citations.has(n) ? citeLink(n) : document.createTextNode(`[${n}]`));
        last = match.index + match[0].length;
      }
      if (!parts.length) continue;
      parts.push(document.createTextNode(value.slice(last)));
      node.replaceWith(...parts.filter((part) => part.nodeType !== Node.TEXT_NODE || part.nodeValue));
    }
  }

  function append(piece) {
    if (!streamed) {
      streamed = document.createElement("p");
      streamed.className = "answer-stream";
      text.replaceChildren(streamed);
    }
    const last = streamed.lastChild;
    if (last && last.nodeType === Node.TEXT_NODE) last.appendData(piece);
    else streamed.append(document.createTextNode(piece));
    linkify();
  }

  function fail(detail) {
    finished = true;
    root.removeAttribute("aria-busy");
    status.textContent = "No answer.";
    text.replaceChildren();
    streamed = null;
    alert.textContent = detail;
    alert.hidden = false;
  }

  function done(data) {
    finished = true;
    root.removeAttribute("aria-busy");
    for (const citation of data.citations || []) citations.set(citation.n, citation);
    // The server's Markdown rendering, cleaned by its allow-list (knowledge/answering/markdown.py).
    text.innerHTML = data.answer_html || "";
    streamed = null;
    const count = citations.size;
    status.textContent = data.answered
      ? `Answered from the passages, citing ${count} of them.`
      : "The passages do not answer this question.";
    warnings.replaceChildren(
      ...(data.warnings || []).map((warning) => {
        const item = document.createElement("li");
        item.textContent = warning;
        return item;
      }),
    );
    root.dataset.state = "done";
  }

  const handlers = {
    passages: (data) => onPassages(data.passages || []),
    delta: (data) => append(String(data.text || "")),
    citation: (data) => {
      citations.set(data.n, data);
      linkify();
      onCitation(data);
    },
    done,
    error: (data) => fail(String(data.detail || "The answer failed.")),
  };

  text.addEventListener("click", (event) => {
    const link = event.target.closest("a.cite");
    if (!link) return;
    const n = Number(link.dataset.n);
    if (!citations.has(n)) return;
    event.preventDefault();
    onCite(n, citations.get(n));
  });

  function body() {
    const payload = { question: d.question, mode: d.mode === "global" ? "global" : "local", limit: Number(d.limit) || 8 };
    const sources = JSON.parse(d.sources || "[]");
    const types = JSON.parse(d.types || "[]");
    if (sources.length) payload.sources = sources;
    if (types.length) payload.entity_types = types;
    if (d.from) payload.ingested_from = d.from;
    if (d.to) payload.ingested_to = d.to;
    if (d.publishedFrom) payload.published_from = d.publishedFrom;
    if (d.publishedTo) payload.published_to = d.publishedTo;
    return JSON.stringify(payload);
  }

  async function run() {
    root.setAttribute("aria-busy", "true");
    status.textContent = "Answering…";
    try {
      const response = await fetch(d.url, {
        method: "POST",
        headers: { Accept: "text/event-stream", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: body(),
        credentials: "same-origin",
      });
      if (!response.ok) {
        fail(await errorDetail(response));
        return;
      }
      const feed = eventParser((name, data) => {
        if (handlers[name] && !finished) handlers[name](data);
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        feed(value);
      }
      if (!finished) fail("The answer ended without a result.");
    } catch (error) {
      if (!finished) fail(`The answer could not be loaded: ${error.message}`);
    }
  }

  return { run };
}
