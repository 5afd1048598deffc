// The Ask page: the streamed answer (answer.js), the passages it cites (passages.js) and
// the details panel the chips open (panel.js). The page works without it: the passages,
// chips and links are plain server-rendered HTML.
import { initAnswer } from "./answer.js";
import { initAskPanel } from "./panel.js";
import { initPassages } from "./passages.js";

const panel = document.getElementById("panel");
if (panel) initAskPanel(panel);

const root = document.getElementById("ask-answer");
const section = document.querySelector("section.passages");
if (root && section) {
  const passages = initPassages({ section, documentUrl: root.dataset.documentUrl });
  initAnswer(root, {
    onPassages: (items) => passages.setPassages(items),
    onCitation: (citation) => passages.markCited(citation),
    onCite: (n) => passages.show(n),
  }).run();
}
