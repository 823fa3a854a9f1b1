#!/usr/bin/env node
// `planbridge`, as the package's bin. Runs the built CLI (dist/, made by `npm run build`, which
// `npm ci` and `npm start` run), with no run-time transpiler. PLANBRIDGE_FROM_SOURCE=1 runs the
// TypeScript sources through tsx instead (the tests do, so that they always exercise the sources
// as they are); so does a checkout that was never built. `token` and a plain `--help` are answered
// first by the fast path (src/cli/fastPath.ts), which loads no CLI library; anything else goes to
// the CLI. This file and the built fast path (dist/fast.cjs) are CommonJS: the two commands
// scripts run most never start Node's ES module loader (~15 ms of CPU before anything runs).
"use strict"
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS on purpose (see above) */
const { existsSync, readFileSync } = require("node:fs")
const { enableCompileCache } = require("node:module")
const { homedir } = require("node:os")
const { join } = require("node:path")
const { pathToFileURL } = require("node:url")

// Node ≥ 22.1 keeps V8's compiled code of what it loads between runs (serve on Node 24: ~100 ms
// less CPU before it answers); in the user's own cache dir, not a /tmp shared with other users.
// Node 20 has no such cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
if (typeof enableCompileCache === "function") {
  enableCompileCache(join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "planbridge", "compile-cache"))
}

// `planbridge schema | head` closes the pipe early: that is not an error.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0)
  throw error
})
const dist = (file) => join(__dirname, "..", "dist", file)
// A build from before the fast path was CommonJS has no fast.cjs: the sources, until `npm run build`.
const fromSource =
  process.env.PLANBRIDGE_FROM_SOURCE === "1" || !existsSync(dist("main.js")) || !existsSync(dist("fast.cjs"))
const argv = process.argv.slice(2)

const run = async () => {
  if (fromSource) {
    const { register } = await import("tsx/esm/api")
    // The repo's tsconfig.json, wherever this runs from: its `paths` map @planbridge/* to their sources.
    register({ tsconfig: join(__dirname, "..", "..", "..", "tsconfig.json") })
  }
  const { runFastPath } = fromSource ? await import("../src/cli/fastPath.ts") : require(dist("fast.cjs"))
  const answered = await runFastPath({
    argv,
    env: process.env,
    stdoutIsTerminal: process.stdout.isTTY === true,
    // Rendered by the build (scripts/build.mjs); from source the CLI renders it.
    plainHelp: () => (!fromSource && existsSync(dist("help.txt")) ? readFileSync(dist("help.txt"), "utf8") : undefined),
    out: (text) => process.stdout.write(text)
  })
  if (answered !== undefined) return answered
  const { main } = await import(fromSource ? "../src/cli/main.ts" : pathToFileURL(dist("main.js")).href)
  return main(argv)
}

run().then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    // As an unhandled rejection would: the error and its stack, exit 1.
    process.exitCode = 1
    console.error(error)
  }
)
