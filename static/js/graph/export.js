// Exporting what is on screen, in the browser: the canvas as PNG, and the loaded (and
// not filtered out) nodes and edges as GraphML or JSON, with their layout positions. The
// whole graph is exported by the API (linked next to these buttons).

function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// Characters XML 1.0 cannot carry at all become U+FFFD; markup characters are escaped.
export function xmlText(value) {
  return String(value ?? "")
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

function stamp() {
  return new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
}

export function viewData(store, workspace) {
  const { nodes, edges, pos, nodeVisible, edgeVisible } = store.graph;
  return {
    format: "graphloom-view",
    version: 1,
    workspace,
    exported_at: new Date().toISOString(),
    nodes: nodes
      .map((node, i) => ({ ...node, x: Math.round(pos[2 * i] * 10) / 10, y: Math.round(pos[2 * i + 1] * 10) / 10, i }))
      // Ghost nodes (a drilled community's neighbours, communitymap.js) are no entities.
      .filter((node) => nodeVisible[node.i] && !node.ghost)
      .map(({ i, ...node }) => node),
    edges: edges
      // Their stubs have negative ids: only relations are exported.
      .filter((edge, j) => edgeVisible[j] && edge.id > 0)
      .map(({ id, source, target, type, weight }) => ({ id, source, target, type, weight })),
  };
}

export function graphml(data) {
  const keys = [
    ["name", "node", "string"],
    ["type", "node", "string"],
    ["degree", "node", "int"],
    ["mention_count", "node", "int"],
    ["community", "node", "int"],
    ["x", "node", "double"],
    ["y", "node", "double"],
    ["type", "edge", "string"],
    ["weight", "edge", "double"],
  ];
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
    ...keys.map(([name, scope, kind]) => `  <key id="${scope[0]}_${name}" for="${scope}" attr.name="${name}" attr.type="${kind}"/>`),
    `  <graph id="${xmlText(data.workspace)}" edgedefault="directed">`,
  ];
  for (const node of data.nodes) {
    lines.push(`    <node id="n${node.id}">`);
    for (const key of ["name", "type", "degree", "mention_count", "community", "x", "y"]) {
      if (node[key] === null || node[key] === undefined) continue;
      lines.push(`      <data key="n_${key}">${xmlText(node[key])}</data>`);
    }
    lines.push("    </node>");
  }
  for (const edge of data.edges) {
    lines.push(`    <edge id="e${edge.id}" source="n${edge.source}" target="n${edge.target}">`);
    lines.push(`      <data key="e_type">${xmlText(edge.type)}</data>`);
    lines.push(`      <data key="e_weight">${xmlText(edge.weight)}</data>`);
    lines.push("    </edge>");
  }
  lines.push("  </graph>", "</graphml>", "");
  return lines.join("\n");
}

export function initExport({ container, store, renderer, workspace }) {
  container.addEventListener("click", (event) => {
    const button = event.target.closest("[data-export]");
    if (!button) return;
    const name = `graphloom-${workspace}-view-${stamp()}`;
    const kind = button.dataset.export;
    if (kind === "png") {
      renderer.drawNow();
      renderer.canvas.toBlob((blob) => blob && download(blob, `${name}.png`), "image/png");
    } else if (kind === "json") {
      const blob = new Blob([JSON.stringify(viewData(store, workspace), null, 1)], { type: "application/json" });
      download(blob, `${name}.json`);
    } else if (kind === "graphml") {
      const blob = new Blob([graphml(viewData(store, workspace))], { type: "application/graphml+xml" });
      download(blob, `${name}.graphml`);
    }
  });
}
