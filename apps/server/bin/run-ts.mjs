#!/usr/bin/env node
// Runs a TypeScript entry point of this package (benchmarks, scripts) through tsx.
import { register } from "tsx/esm/api"
import { fileURLToPath, pathToFileURL } from "node:url"
import { resolve } from "node:path"

// The repo's tsconfig.json, wherever this runs from: its `paths` map @planbridge/* to their sources.
register({ tsconfig: fileURLToPath(new URL("../../../tsconfig.json", import.meta.url)) })
const [entry, ...rest] = process.argv.slice(2)
if (!entry) {
  console.error("usage: run-ts.mjs <file.ts> [args…]")
  process.exit(2)
}
process.argv = [process.argv[0], entry, ...rest]
await import(pathToFileURL(resolve(entry)).href)
