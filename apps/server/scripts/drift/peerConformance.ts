import { execFile } from "node:child_process"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { Schema } from "effect"

/**
 * The real-peer conformance subset against the newest Codex: the conformance test (the recorded
 * transcripts against the newest generated schema) and the real app-server tests of plans,
 * questions, approvals and answers, with the scripted model, in the loopback-only namespace. The
 * tests run the binary `PLANBRIDGE_TEST_CODEX_JS` names (`test/provider/codex/harness.ts`).
 */

const SUBSET = [
  "apps/server/test/provider/codex/codexConformance.test.ts",
  "apps/server/test/provider/codex/codexAdapter.real.test.ts",
  "apps/server/test/provider/codex/codexAnswers.real.test.ts",
  "apps/server/test/provider/codex/codexPermissions.real.test.ts",
  "apps/server/test/provider/codex/codexElicitation.real.test.ts"
] as const

const VitestJson = Schema.Struct({
  numPassedTests: Schema.Number,
  numFailedTests: Schema.Number,
  testResults: Schema.Array(
    Schema.Struct({
      assertionResults: Schema.Array(
        Schema.Struct({
          fullName: Schema.String,
          status: Schema.String,
          failureMessages: Schema.optionalKey(Schema.Array(Schema.String))
        })
      )
    })
  )
})

export interface PeerResult {
  readonly passed: number
  readonly failed: ReadonlyArray<string>
}

export const runCodexPeerSubset = async (repo: string, codexJs: string, scratch: string): Promise<PeerResult> => {
  const out = join(scratch, "vitest.json")
  const args = [
    "scripts/in-loopback-netns.sh",
    "npx",
    "vitest",
    "run",
    ...SUBSET,
    "--reporter=json",
    `--outputFile=${out}`
  ]
  // A failing test makes vitest exit 1; the JSON file says which, so the exit status is not the verdict.
  await promisify(execFile)("bash", args, {
    cwd: repo,
    env: { ...process.env, PLANBRIDGE_TEST_CODEX_JS: codexJs },
    maxBuffer: 64 * 1024 * 1024
  }).catch(() => undefined)
  const text = await readFile(out, "utf8").catch(() => undefined)
  if (text === undefined) return { passed: 0, failed: ["the conformance subset did not run (no vitest report)"] }
  const report = Schema.decodeUnknownSync(Schema.fromJsonString(VitestJson))(text)
  const failed = report.testResults.flatMap((file) =>
    file.assertionResults
      .filter((t) => t.status === "failed")
      .map((t) => {
        // vitest's JSON keeps the assertion's first line and the stack, not the diff: name where it failed.
        const lines = (t.failureMessages?.[0] ?? "").split("\n").map((l) => l.trim())
        const where = lines
          .find((l) => l.includes(".test.ts:"))
          ?.replace(/^at /, "")
          .replace(`${repo}/`, "")
        return `${t.fullName}: ${lines[0] ?? ""}${where !== undefined ? ` (${where})` : ""}`
      })
  )
  return { passed: report.numPassedTests, failed }
}
