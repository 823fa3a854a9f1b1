import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { ThreadId } from "@planbridge/contracts"

/** The recorded Codex transcripts in `fixtures/codex/` and their golden canonical output. */

export const fixturesDir = fileURLToPath(new URL("../../../../../fixtures/codex/", import.meta.url))

export interface CodexFixture {
  readonly name: string
  readonly threadId: ThreadId
  readonly lines: ReadonlyArray<Record<string, unknown>>
  readonly golden: ReadonlyArray<unknown>
}

const readJsonl = (path: string): ReadonlyArray<Record<string, unknown>> =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>)

export const loadCodexFixtures = (): ReadonlyArray<CodexFixture> =>
  readdirSync(fixturesDir)
    .filter((file) => file.endsWith(".jsonl") && !file.endsWith(".events.jsonl"))
    .sort()
    .map((file) => {
      const name = file.slice(0, -".jsonl".length)
      return {
        name,
        threadId: `codex-fixture-${name}` as ThreadId,
        lines: readJsonl(`${fixturesDir}${file}`),
        golden: readJsonl(`${fixturesDir}${name}.events.jsonl`)
      }
    })
