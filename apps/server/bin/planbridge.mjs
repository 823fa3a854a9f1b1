#!/usr/bin/env node
// Runs the built CLI (dist/, made by `npm run build`, which `npm ci` and `npm start` run), with
// no run-time transpiler. PLANBRIDGE_FROM_SOURCE=1 runs the TypeScript sources through tsx
// instead (the tests do, so that they always exercise the sources as they are); so does a
// checkout that was never built.
import { existsSync } from "node:fs"

// `planbridge schema | head` closes the pipe early: that is not an error.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0)
  throw error
})
const built = new URL("../dist/main.js", import.meta.url)
const loadMain = async () => {
  if (process.env.PLANBRIDGE_FROM_SOURCE !== "1" && existsSync(built)) return (await import(built.href)).main
  const { register } = await import("tsx/esm/api")
  register()
  return (await import("../src/cli/main.ts")).main
}
const main = await loadMain()
process.exitCode = await main(process.argv.slice(2))
