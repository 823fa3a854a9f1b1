/**
 * The drift gate: installs the newest published version of every provider package Planbridge runs
 * into a scratch prefix, compares their generated schemas / type declarations with the pinned ones
 * (the installed `node_modules`) for every method and type Planbridge decodes or answers, and
 * prints a short report; then runs the real-peer Codex conformance subset against the newest
 * `codex` (scripted model, loopback-only namespace). Exits 1 when a decoded surface changed or
 * disappeared, or a conformance test failed.
 *
 *   npm run drift [-- --schemas-only]
 *
 * It needs the npm registry and its answer changes with time, so it is not part of `npm test`:
 * run it before moving a pin, and on a schedule. `PLANBRIDGE_DRIFT_PREFIX=<dir>` uses (and keeps)
 * that prefix, installing into it only when it has no `node_modules` yet.
 */
import { execFile } from "node:child_process"
import { access, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { acpSdkDrift, WRAPPERS, wrapperDrift } from "./drift/acpDrift.ts"
import { claudeDrift } from "./drift/claudeDrift.ts"
import { codexDrift } from "./drift/codexDrift.ts"
import { runCodexPeerSubset } from "./drift/peerConformance.ts"
import { drifted, formatReport, type ProviderReport } from "./drift/report.ts"

const PACKAGES = ["@openai/codex", "@anthropic-ai/claude-agent-sdk", "@agentclientprotocol/sdk", ...WRAPPERS] as const

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..")
const pinnedModules = join(repo, "node_modules")
const schemasOnly = process.argv.includes("--schemas-only")

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false
  )

const install = async (prefix: string): Promise<void> => {
  await mkdir(prefix, { recursive: true })
  // A package.json of its own, so npm installs here and never walks up into a project.
  await writeFile(join(prefix, "package.json"), '{ "private": true }\n')
  process.stderr.write(`drift: installing the newest ${PACKAGES.join(", ")} into ${prefix}\n`)
  await promisify(execFile)(
    "npm",
    [
      "install",
      "--prefix",
      prefix,
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      ...PACKAGES.map((p) => `${p}@latest`)
    ],
    { maxBuffer: 16 * 1024 * 1024 }
  )
}

const given = process.env.PLANBRIDGE_DRIFT_PREFIX
const prefix = given !== undefined && given !== "" ? resolve(given) : await mkdtemp(join(tmpdir(), "planbridge-drift-"))
const scratch = await mkdtemp(join(tmpdir(), "planbridge-drift-schemas-"))
try {
  if (!(await exists(join(prefix, "node_modules")))) await install(prefix)
  const newestModules = join(prefix, "node_modules")
  const reports: Array<ProviderReport> = [
    await codexDrift(pinnedModules, newestModules, scratch),
    await claudeDrift(pinnedModules, newestModules),
    await acpSdkDrift(pinnedModules, newestModules)
  ]
  for (const name of WRAPPERS) reports.push(await wrapperDrift(pinnedModules, newestModules, name))
  console.log(formatReport(reports))
  let peersFailed = false
  if (!schemasOnly) {
    const codexJs = join(newestModules, "@openai/codex", "bin", "codex.js")
    process.stderr.write("drift: running the real-peer Codex conformance subset against the newest codex\n")
    const peers = await runCodexPeerSubset(repo, codexJs, scratch)
    peersFailed = peers.failed.length > 0
    console.log(`real-peer Codex conformance against the newest: ${peers.passed} passed, ${peers.failed.length} failed`)
    for (const failure of peers.failed) console.log(`  FAILED ${failure}`)
  }
  process.exitCode = drifted(reports) || peersFailed ? 1 : 0
} finally {
  await rm(scratch, { recursive: true, force: true })
  if (given === undefined || given === "") await rm(prefix, { recursive: true, force: true })
}
