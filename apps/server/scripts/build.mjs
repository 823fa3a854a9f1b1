#!/usr/bin/env node
// Builds what `planbridge` runs: the CLI and server as JavaScript (dist/, never committed), so
// that no run-time TypeScript transpiler is loaded. One ESM bundle with code splitting: every
// `import()` of a command or a provider stays a separate chunk, loaded on first use. Bundled in:
// our workspace package (@planbridge/contracts, shipped as TypeScript) and the pure-ESM
// libraries of many small modules (effect, drizzle-orm), whose hundreds of file look-ups were
// most of a CLI command's start-up. Everything else stays external, resolved from node_modules
// as usual: native code (better-sqlite3), CommonJS servers (fastify, ws), and the provider
// packages, which find their own files (the Codex binary, Claude Code's cli.js) beside them.
import { build } from "esbuild"
import { readFileSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const BUNDLED = new Set(["@planbridge/contracts", "effect", "drizzle-orm"])
const external = Object.keys(manifest.dependencies)
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`])

const outdir = join(root, "dist")
rmSync(outdir, { recursive: true, force: true })
await build({
  absWorkingDir: root,
  entryPoints: { main: "src/cli/main.ts" },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external,
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: "linked",
  // Less to parse at start-up; identifiers keep their names (stack traces, class names).
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning"
})
