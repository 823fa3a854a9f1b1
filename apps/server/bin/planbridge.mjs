#!/usr/bin/env node
// Runs the built CLI (dist/, made by `npm run build`, which `npm ci` and `npm start` run), with
// no run-time transpiler. PLANBRIDGE_FROM_SOURCE=1 runs the TypeScript sources through tsx
// instead (the tests do, so that they always exercise the sources as they are); so does a
// checkout that was never built. `token` and a plain `--help` are answered first by the fast
// path (src/cli/fastPath.ts), which loads no CLI library; anything else goes to the CLI.
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

// `planbridge schema | head` closes the pipe early: that is not an error.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0)
  throw error
})
const dist = (file) => new URL(`../dist/${file}`, import.meta.url)
const fromSource = process.env.PLANBRIDGE_FROM_SOURCE === "1" || !existsSync(dist("main.js"))
if (fromSource) {
  const { register } = await import("tsx/esm/api")
  // The repo's tsconfig.json, wherever this runs from: its `paths` map @planbridge/* to their sources.
  register({ tsconfig: fileURLToPath(new URL("../../../tsconfig.json", import.meta.url)) })
}
const argv = process.argv.slice(2)
const { runFastPath } = await import(fromSource ? "../src/cli/fastPath.ts" : dist("fast.js").href)
const answered = await runFastPath({
  argv,
  env: process.env,
  stdoutIsTerminal: process.stdout.isTTY === true,
  // Rendered by the build (scripts/build.mjs); from source the CLI renders it.
  plainHelp: () => (!fromSource && existsSync(dist("help.txt")) ? readFileSync(dist("help.txt"), "utf8") : undefined),
  out: (text) => process.stdout.write(text)
})
if (answered !== undefined) process.exitCode = answered
else {
  const { main } = await import(fromSource ? "../src/cli/main.ts" : dist("main.js").href)
  process.exitCode = await main(argv)
}
