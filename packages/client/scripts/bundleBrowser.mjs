#!/usr/bin/env node
// dist/browser.js: the client and everything it imports (@planbridge/contracts, effect) in one
// ES module, for a page without a bundler (`<script type="module">`, `import(".../browser.js")`).
// Made from tsc's output (dist/index.js), so the bundle is exactly what Node and bundlers load.
// `ws` is never imported by the client (a Node program passes it as `options.WebSocket`), so a
// browser needs nothing else.
import { build } from "esbuild"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
await build({
  absWorkingDir: root,
  entryPoints: ["dist/index.js"],
  outfile: "dist/browser.js",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  logLevel: "warning"
})
