#!/usr/bin/env node
// The server runs from its TypeScript sources (no build step): tsx registers the loader.
import { register } from "tsx/esm/api"

register()
const { main } = await import("../src/cli/main.ts")
process.exitCode = await main(process.argv.slice(2))
