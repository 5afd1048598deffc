// Checks Cypher statements with Neo4j's own Cypher language support
// (@neo4j-cypher/language-support: Neo4j's parser and its semantic analysis, for Cypher 5),
// so the statements of the Neo4j backend are validated where no Neo4j server can run.
//
// Reads JSON on stdin: {"statements": [{"name": ..., "cypher": ...}], "parameters": [...]},
// where `parameters` names every `$parameter` the statements may use (any other is an
// error). Prints each statement's syntax errors, semantic errors and warnings (unknown
// label or relationship type, deprecated feature, ...) with its line and column.
// Exit status: 0 all clean, 1 some statement has a problem, 2 the input or the package is
// unusable. Run by tests/knowledge/graph/test_cypher_statements.py.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// The package's ES build imports paths without extensions, which Node refuses: load its
// CommonJS build, which is the same code bundled.
const require = createRequire(import.meta.url);

// The shape of the projection (knowledge/graph/neo4j.py): one label, one relationship type.
const LABELS = ["Entity"];
const RELATIONSHIP_TYPES = ["REL"];
const PROPERTY_KEYS = ["id", "workspace_id", "name", "type", "mention_count", "community", "weight"];
const SEVERITY = { 1: "error", 2: "warning", 3: "information", 4: "hint" };

function fail(message) {
  process.stderr.write(`cypher_check: ${message}\n`);
  process.exit(2);
}

function readInput() {
  let input;
  try {
    input = JSON.parse(readFileSync(0, "utf8"));
  } catch (error) {
    fail(`stdin is not JSON: ${error.message}`);
  }
  const statements = input?.statements;
  const parameters = input?.parameters ?? [];
  const valid = (s) => s && typeof s.name === "string" && typeof s.cypher === "string";
  if (!Array.isArray(statements) || statements.length === 0 || !statements.every(valid)) {
    fail('expected {"statements": [{"name": "...", "cypher": "..."}, ...]} with one at least');
  }
  if (!Array.isArray(parameters) || !parameters.every((p) => typeof p === "string")) {
    fail('"parameters" must be a list of names');
  }
  return { statements, parameters };
}

function loadLanguageSupport() {
  try {
    return require("@neo4j-cypher/language-support");
  } catch (error) {
    fail(`cannot load @neo4j-cypher/language-support (run \`npm ci\`): ${error.message}`);
  }
}

// The functions and procedures a Neo4j 5 server lists (SHOW FUNCTIONS / SHOW PROCEDURES),
// as the package ships them for its own checks: calls are then checked by name and
// signature, not only parsed.
function buildSchema(support, parameters) {
  const catalogue = support.testData?.mockSchema;
  if (!catalogue?.functions?.["CYPHER 5"] || !catalogue?.procedures?.["CYPHER 5"]) {
    fail("the package no longer ships a Neo4j 5 function catalogue: update this script");
  }
  return {
    labels: LABELS,
    relationshipTypes: RELATIONSHIP_TYPES,
    propertyKeys: PROPERTY_KEYS,
    parameters: Object.fromEntries(parameters.map((name) => [name, null])),
    functions: { "CYPHER 5": catalogue.functions["CYPHER 5"] },
    procedures: { "CYPHER 5": catalogue.procedures["CYPHER 5"] },
    defaultLanguage: "CYPHER 5",
  };
}

function problems(support, schema, cypher) {
  if (cypher.trim() === "") {
    return [{ where: "1:1", severity: "error", message: "empty statement", line: "" }];
  }
  const lines = cypher.split("\n");
  return support.lintCypherQuery(cypher, schema, false).map((diagnostic) => {
    const { line, character } = diagnostic.range.start;
    return {
      where: `${line + 1}:${character + 1}`,
      severity: SEVERITY[diagnostic.severity] ?? "error",
      message: diagnostic.message,
      line: lines[line] ?? "",
    };
  });
}

function main() {
  const { statements, parameters } = readInput();
  const support = loadLanguageSupport();
  const schema = buildSchema(support, parameters);
  let failed = 0;
  for (const { name, cypher } of statements) {
    const found = problems(support, schema, cypher);
    if (found.length === 0) {
      console.log(`ok    ${name}`);
      continue;
    }
    failed += 1;
    console.log(`FAIL  ${name}`);
    for (const { where, severity, message, line } of found) {
      console.log(`      ${where} ${severity}: ${message.split("\n").join("\n        ")}`);
      console.log(`        | ${line}`);
    }
  }
  const total = statements.length;
  console.log(`${total} statements checked: ${total - failed} clean, ${failed} with problems`);
  process.exit(failed === 0 ? 0 : 1);
}

main();
