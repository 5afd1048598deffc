// The passages of the Ask page (server-rendered, with the query's words marked) as the
// answer refers to them: the answer numbers its own passages, so the listed ones take its
// numbers and a citation finds its passage here by chunk; one the page does not list (a
// date range narrowed the list) is added from the answer's passages event: its blocks (the
// server's reading of the text, prose without Markdown marks and code set apart, as the
// listed passages are) set as text only, the question's words marked as the server marks
// them (the section's data-terms).

export function initPassages({ section, documentUrl }) {
  const byN = new Map(); // the answer's n -> its passage object

  function link(documentId, start, end) {
    const url = new URL(documentUrl, window.location.origin);
    url.pathname = url.pathname.replace(/\/0\/$/, `/${encodeURIComponent(documentId)}/`);
    url.searchParams.set("start", String(start));
    url.searchParams.set("end", String(end));
    return `${url.pathname}${url.search}`;
  }

  function added(passage) {
    const article = document.createElement("article");
    article.className = "passage from-answer";
    article.id = `answer-passage-${passage.n}`;
    article.dataset.chunk = String(passage.chunk_id);
    article.tabIndex = -1;
    const heading = document.createElement("h3");
    const evidence = document.createElement("a");
    evidence.className = "evidence";
    evidence.href = link(passage.document_id, passage.char_start, passage.char_end);
    evidence.textContent = passage.document_title;
    const label = document.createElement("span");
    label.className = "passage-n";
    label.textContent = `[${passage.n}]`;
    heading.append(label, " ", evidence);
    if (passage.published_at) {
      const dated = document.createElement("time");
      dated.className = "passage-date";
      dated.dateTime = passage.published_at;
      dated.textContent = passage.published_at.slice(0, 10);
      heading.append(" ", dated);
    }
    const text = document.createElement("div");
    text.className = "passage-text";
    const blocks = passage.blocks?.length ? passage.blocks : [{ code: false, text: passage.text }];
    for (const block of blocks) text.append(blockElement(block));
    article.append(heading, text);
    section.querySelector(".no-passages")?.remove();
    section.append(article);
    return article;
  }

  const terms = (section.dataset.terms || "").split(" ").filter(Boolean);
  const escaped = terms
    .sort((a, b) => b.length - a.length)
    .map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  // Whole words, letters of any script included, as the server marks them (JavaScript's \b
  // knows ASCII letters only).
  const edge = "[\\p{L}\\p{N}_]";
  const pattern = escaped.length
    ? new RegExp(`(?<!${edge})(?:${escaped.join("|")})(?!${edge})`, "giu")
    : null;

  // `text` as text nodes, the question's words each in a <mark>.
  function marked(element, text) {
    let last = 0;
    for (const found of pattern ? text.matchAll(pattern) : []) {
      element.append(text.slice(last, found.index));
      const mark = document.createElement("mark");
      mark.textContent = found[0];
      element.append(mark);
      last = found.index + found[0].length;
    }
    element.append(text.slice(last));
    return element;
  }

  function blockElement(block) {
    if (!block.code) return marked(document.createElement("p"), block.text);
    const pre = document.createElement("pre");
    pre.className = "passage-code";
    pre.append(marked(document.createElement("code"), block.text));
    return pre;
  }

  function articleOf(n) {
    const passage = byN.get(n);
    if (!passage) return section.querySelector(`#passage-${n}`);
    const found = [...section.querySelectorAll("article.passage")].find(
      (article) => article.dataset.chunk === String(passage.chunk_id),
    );
    return found || added(passage);
  }

  function setPassages(passages) {
    byN.clear();
    for (const passage of passages) byN.set(passage.n, passage);
    renumber(passages);
  }

  // The listed passages take the answer's numbers, so that "[2]" in the answer and on the
  // page is one passage even when the two retrievals differ (a document ingested between
  // them, or a filter only one of them had); a listed passage the answer was not given
  // keeps no number ("[–]"), and one it cites that the page lacks is added as "[n]".
  function renumber(passages) {
    const numberOf = new Map(passages.map((passage) => [String(passage.chunk_id), passage.n]));
    const listed = [...section.querySelectorAll("article.passage:not(.from-answer)")];
    for (const article of listed) article.removeAttribute("id");
    for (const article of listed) {
      const n = numberOf.get(article.dataset.chunk);
      const label = article.querySelector(".passage-n");
      if (n === undefined) {
        article.classList.add("outside-answer");
        if (label) {
          label.textContent = "[–]";
          label.title = "Not among the passages the answer was given";
        }
        continue;
      }
      article.id = `passage-${n}`;
      if (label) label.textContent = `[${n}]`;
    }
  }

  // A citation arrived: its passage says so, with a link to the very sentence cited.
  function markCited(citation) {
    const article = articleOf(citation.n);
    if (!article || article.querySelector(`[data-cited="${citation.n}"]`)) return;
    article.classList.add("is-cited");
    const cited = document.createElement("a");
    cited.className = "cited-span";
    cited.dataset.cited = String(citation.n);
    cited.href = link(citation.document_id, citation.char_start, citation.char_end);
    cited.textContent = `Cited as [${citation.n}]: open the sentence`;
    const line = document.createElement("p");
    line.className = "cited-line";
    line.append(cited);
    article.append(line);
  }

  // A citation was clicked: bring its passage into view and mark it.
  function show(n) {
    const article = articleOf(n);
    if (!article) return;
    for (const other of section.querySelectorAll(".passage.is-target")) other.classList.remove("is-target");
    article.classList.add("is-target");
    article.scrollIntoView({ block: "center", behavior: "smooth" });
    article.focus({ preventScroll: true });
  }

  return { setPassages, markCited, show };
}
