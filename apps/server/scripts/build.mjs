#!/usr/bin/env node
// Builds what `planbridge` runs: the CLI and server as JavaScript (dist/, never committed), so
// that no run-time TypeScript transpiler is loaded. One ESM bundle with code splitting: every
// `import()` of a command or a provider stays a separate chunk, loaded on first use. Bundled in:
// our workspace packages (@planbridge/contracts, @planbridge/client, from their sources: tsconfig.json `paths`) and the
// libraries of many small modules (effect, drizzle-orm, fastify, @fastify/static with glob and send,
// ws), whose hundreds of file look-ups and compilations were most of the start-up (serve: 520 →
// 340 ms of CPU; @fastify/static bundled: ~400 → ~340 ms).
// External, resolved from node_modules as usual: native code (better-sqlite3) and the provider
// packages, which find their own files (the Codex binary, Claude Code's cli.js) beside them
// and are loaded only by a provider's first session.
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const BUNDLED = new Set([
  "@planbridge/contracts",
  "@planbridge/client",
  "effect",
  "drizzle-orm",
  "fastify",
  "@fastify/websocket",
  "@fastify/static",
  "ws"
])
const external = Object.keys(manifest.dependencies)
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`])
  .concat(["bufferutil", "utf-8-validate"])
  // Fastify's JSON-schema compilers (ajv, fast-json-stringify: ~0.8 MB): the server gives Fastify its
  // own (`NO_ROUTE_SCHEMAS`, src/http/RouteSchemas.ts), so these are never loaded and need not be parsed.
  .concat(["@fastify/ajv-compiler", "@fastify/fast-json-stringify-compiler"])

/**
 * @fastify/static `require`s glob (~100 KB) as it loads, for `wildcard: false` only (a listing of
 * the root at registration); http/WebUi.ts registers it with `wildcard: true`. Here its `glob` is a
 * module that loads the real one on its first call, so `serve` does not run glob's module body
 * before it answers (~10 ms of CPU). The same bundled glob, resolved from @fastify/static's folder.
 */
const globlessStatic = {
  name: "glob-on-first-call",
  setup(build) {
    build.onResolve({ filter: /^glob$/ }, (args) =>
      args.importer.includes("/node_modules/@fastify/static/")
        ? { path: "glob-on-first-call", namespace: "glob-on-first-call", pluginData: args.resolveDir }
        : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "glob-on-first-call" }, (args) => ({
      contents: 'exports.glob = (...args) => require("glob").glob(...args)',
      loader: "js",
      resolveDir: args.pluginData
    }))
  }
}

const REQUIRE_SHIM =
  'import { createRequire as __planbridgeRequire } from "node:module"; const require = __planbridgeRequire(import.meta.url);'

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
  // The bundled CommonJS modules (fastify) `require` Node's built-ins: an ES module has no `require`.
  banner: { js: REQUIRE_SHIM },
  plugins: [globlessStatic],
  logLevel: "warning"
})

// The fast path (`token`, `--help`): one CommonJS file, required by bin/planbridge.cjs, so that
// those commands load no ES module at all (Node's ES module loader alone costs ~15 ms of CPU).
await build({
  absWorkingDir: root,
  entryPoints: ["src/cli/fastPath.ts"],
  outfile: join(outdir, "fast.cjs"),
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  external,
  sourcemap: "linked",
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning"
})

// `planbridge --help` as the CLI prints it plain (no terminal, no colour forced), for the fast
// path (src/cli/fastPath.ts), which serves it without loading the CLI library: rendered here by
// the CLI just built (help.txt does not exist yet, so the fast path leaves it to the CLI).
const {
  TERM: _term,
  NO_COLOR: _noColor,
  FORCE_COLOR: _forceColor,
  PLANBRIDGE_FROM_SOURCE: _source,
  ...env
} = process.env
const help = spawnSync(process.execPath, [join(root, "bin", "planbridge.cjs"), "--help"], { env, encoding: "utf8" })
if (help.status !== 0 || help.stdout === "") throw new Error(`rendering --help failed: ${help.stderr}`)
writeFileSync(join(outdir, "help.txt"), help.stdout)
