import { decodeRuntimeEventSync, type ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { claudeReplayMapping } from "../../../src/provider/claude/ClaudeReplay.ts"
import { SDK_VERSION } from "../../../src/provider/claude/ClaudeTranscript.ts"
import { replay as kernelReplay } from "../../../src/provider/kernel/replay.ts"

/**
 * Golden files: each recorded transcript in fixtures/claude (written by
 * apps/server/scripts/record-claude-fixtures.ts against the real SDK) replays to exactly the
 * canonical events pinned next to it.
 */
const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../../fixtures/claude")
const readJsonl = (path: string): ReadonlyArray<unknown> =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as unknown)

const names = readdirSync(FIXTURES)
  .filter((file) => file.endsWith(".jsonl") && !file.endsWith(".events.jsonl"))
  .map((file) => file.slice(0, -".jsonl".length))

const replay = (lines: ReadonlyArray<unknown>, name: string) =>
  Effect.runPromise(kernelReplay(claudeReplayMapping, lines, { threadId: `fixture-${name}` as ThreadId }))

describe("Claude transcript replay (golden files)", () => {
  it("names the installed SDK, and every recording was made with it (re-record on a pin move)", () => {
    // The SDK exports no package.json; its main module sits next to it.
    const sdkDir = dirname(createRequire(import.meta.url).resolve("@anthropic-ai/claude-agent-sdk"))
    const installed = (JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")) as { version: string }).version
    expect(SDK_VERSION).toBe(installed)
    const recorded = new Set(
      names.map((name) => (readJsonl(join(FIXTURES, `${name}.jsonl`))[0] as { sdkVersion?: string }).sdkVersion)
    )
    expect([...recorded]).toEqual([installed])
  })

  it("has the recorded scenarios", () => {
    expect(names.sort()).toEqual([
      "approvals",
      "interrupt-question",
      "plan-reject-edit",
      "plan-session",
      "tasks",
      "todowrite"
    ])
  })

  for (const name of names) {
    it(`replays ${name} into its golden events, all valid canonical events`, async () => {
      const events = await replay(readJsonl(join(FIXTURES, `${name}.jsonl`)), name)
      expect(JSON.parse(JSON.stringify(events))).toEqual(readJsonl(join(FIXTURES, `${name}.events.jsonl`)))
      for (const event of events) expect(() => decodeRuntimeEventSync(event)).not.toThrow()
      expect(events.filter((e) => e.type === "runtime.warning" || e.type === "runtime.error")).toEqual([])
      expect(await replay(readJsonl(join(FIXTURES, `${name}.jsonl`)), name)).toEqual(events)
    })
  }

  it("derives ids and times from the transcript", async () => {
    const lines = readJsonl(join(FIXTURES, "plan-session.jsonl"))
    const events = await replay(lines, "plan-session")
    const meta = lines[0] as { startedAt: string }
    expect(events[0]?.eventId).toBe("fixture-plan-session:r:event:1")
    expect(Date.parse(events[0]?.createdAt ?? "")).toBeGreaterThanOrEqual(Date.parse(meta.startedAt))
    const prompt = events.find((e) => e.type === "user-input.requested")
    expect(prompt?.type === "user-input.requested" && prompt.payload.prompt.promptId).toMatch(
      /^fixture-plan-session:prompt:toolu_/
    )
  })

  it("refuses a transcript without its meta line, or with a bad line, naming the line", async () => {
    const missing = await Effect.runPromise(
      Effect.flip(
        kernelReplay(claudeReplayMapping, [{ t: 0, dir: "in", msg: { type: "system" } }], { threadId: "t" as ThreadId })
      )
    )
    expect(missing).toMatchObject({ _tag: "AdapterError", reason: { _tag: "InvalidTranscript", line: 0 } })
    const meta = { dir: "meta", provider: "claude", sdkVersion: "0.3.333", startedAt: "2026-11-30T00:00:00.000Z" }
    const badLocal = await Effect.runPromise(
      Effect.flip(
        kernelReplay(claudeReplayMapping, [meta, { t: 1, dir: "local", msg: { kind: "user" } }], {
          threadId: "t" as ThreadId
        })
      )
    )
    expect(badLocal).toMatchObject({ _tag: "AdapterError", reason: { _tag: "InvalidTranscript", line: 1 } })
    const notObject = await Effect.runPromise(
      Effect.flip(kernelReplay(claudeReplayMapping, [meta, 42], { threadId: "t" as ThreadId }))
    )
    expect(notObject).toMatchObject({ _tag: "AdapterError", reason: { _tag: "InvalidTranscript", line: 1 } })
  })
})
