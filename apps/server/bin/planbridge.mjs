#!/usr/bin/env node
// The server runs from its TypeScript sources (no build step): tsx registers the loader.
import { register } from "tsx/esm/api"

register()
// `planbridge schema | head` closes the pipe early: that is not an error.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0)
  throw error
})
const { main } = await import("../src/cli/main.ts")
process.exitCode = await main(process.argv.slice(2))
