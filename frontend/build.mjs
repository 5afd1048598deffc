// Builds the third-party front-end code from node_modules into static/vendor/ (git-ignored),
// so nothing third-party is committed and collectstatic needs no network.
// d3 modules are bundled into one ES module; htmx is copied as published.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

const out = "static/vendor";
mkdirSync(out, { recursive: true });

copyFileSync("node_modules/htmx.org/dist/htmx.min.js", `${out}/htmx.min.js`);

await build({
  entryPoints: ["frontend/d3.js"],
  bundle: true,
  format: "esm",
  minify: true,
  outfile: `${out}/d3.js`,
  legalComments: "linked",
});
console.log(`front-end vendor files written to ${out}/`);
