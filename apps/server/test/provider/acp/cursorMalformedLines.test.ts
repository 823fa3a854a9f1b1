import { ThreadId, type RuntimeEventOf } from "@planbridge/contracts"
import { Effect } from "effect"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { acpReplayMapping } from "../../../src/provider/acp/AcpReplay.ts"
import { replay } from "../../../src/provider/kernel/replay.ts"
import { decodeAgentLine } from "../../../src/provider/acp/AcpTransport.ts"
import { INVALID_LINE_MAX_BYTES } from "../../../src/provider/acp/AcpNative.ts"
import { makeLineSplitter } from "../../../src/provider/lines.ts"
import { openSession, recording, replayOfLive, run } from "./harness.ts"
import { MALFORMED } from "./malformedLines.ts"

/**
 * Issue 10, finding 3: a line from the agent that is no JSON-RPC message used to vanish in the
 * SDK's stream. Each must yield exactly one `runtime.warning` (`invalid_line`) carrying the
 * line cut to `INVALID_LINE_MAX_BYTES`, in stream order, and the session must go on.
 */
const root = resolve(import.meta.dirname, "../../../../..")
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(import.meta.dirname, "scriptedCursorAgent.ts")]
})
const env = { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
const bytes = (text: string) => Buffer.byteLength(text, "utf8")

/** What the client keeps of a bad line: at most the bound, never half a character. */
const kept = (line: string) => {
  let out = ""
  for (const ch of line) {
    if (bytes(out + ch) > INVALID_LINE_MAX_BYTES) break
    out += ch
  }
  return out
}

describe("Cursor: malformed agent lines become one runtime.warning each; the session goes on", () => {
  it("reports every bad line once, in order, with its text; later messages and turns still work", async () => {
    const threadId = ThreadId.make("thread-cursor-malformed")
    const { recorder, options } = recording("cursor", threadId)
    const adapter = makeAcpAdapter(profile, { env, ...options })
    const open = await openSession(adapter, { threadId, cwd: root, mode: "default" })
    try {
      const { log, session } = open
      const from = log.events.length
      const turnId = await run(session.startTurn({ text: "SCENARIO:MALFORMED" }))
      const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId)
      expect(completed.payload.status).toBe("completed")
      const turnEvents = log.events.slice(from)
      const warnings = turnEvents.filter((e): e is RuntimeEventOf<"runtime.warning"> => e.type === "runtime.warning")

      // One per bad line, nothing else: the transport's lines, then the two undecodable messages.
      expect(warnings.map((w) => w.payload.code)).toEqual([
        ...MALFORMED.map(() => "invalid_line"),
        "update_invalid",
        "request_invalid"
      ])
      MALFORMED.forEach(({ line, reason }, i) => {
        const warning = warnings[i]!
        const truncated = bytes(line) > INVALID_LINE_MAX_BYTES
        expect(warning.raw).toEqual({ source: "acp.stdout", payload: kept(line) })
        expect(warning.payload.detail).toMatchObject({ reason, bytes: bytes(line), truncated })
        expect(warning.turnId).toBeUndefined()
      })
      expect(bytes(String(warnings[MALFORMED.length - 1]!.raw?.payload))).toBeLessThanOrEqual(INVALID_LINE_MAX_BYTES)
      expect(warnings[MALFORMED.length]!.raw).toMatchObject({ source: "acp.notification", method: "session/update" })
      expect(warnings[MALFORMED.length + 1]!.raw).toMatchObject({
        source: "acp.request",
        method: "session/request_permission"
      })

      // In stream order: after the text written before them, before the text written after.
      const at = (pred: (e: (typeof turnEvents)[number]) => boolean) => turnEvents.findIndex(pred)
      const before = at((e) => e.type === "content.delta" && e.payload.delta === "Before the bad lines.")
      const after = at((e) => e.type === "content.delta" && e.payload.delta === "After the bad lines.")
      expect(before).toBeGreaterThan(-1)
      expect(before).toBeLessThan(turnEvents.indexOf(warnings[0]!))
      expect(turnEvents.indexOf(warnings.at(-1)!)).toBeLessThan(after)
      // Nothing from inside a bad line was mapped; the bad request got its JSON-RPC error.
      const text = log.assistantText(turnId)
      expect(text).not.toMatch(/lost|batched|unversioned/)
      expect(text).toContain("ERROR session/request_permission -32602")

      // The session goes on.
      const next = await run(session.startTurn({ text: "SCENARIO:PLAN_ONLY" }))
      expect((await log.waitFor("turn.completed", (e) => e.turnId === next)).payload.status).toBe("completed")
      expect(log.assistantText(next)).toContain("Plan done.")
    } finally {
      await open.close()
    }

    // Recorded as transcript lines where the session processed them; the replay says the same.
    const invalid = recorder
      .lines()
      .filter((l) => l.dir === "local" && (l.msg as { kind?: unknown } | undefined)?.kind === "invalid")
    expect(invalid).toHaveLength(MALFORMED.length)
    const { live, replayed } = await replayOfLive(recorder, open.log, threadId)
    expect(replayed).toEqual(live)
  })

  it("a recorded invalid line replays to its warning", async () => {
    const meta = { dir: "meta", provider: "cursor", agent: "x", startedAt: "2026-11-30T00:00:00.000Z" }
    const line = {
      t: 5,
      dir: "local",
      msg: { kind: "invalid", reason: "not_json", text: "oops", bytes: 4, truncated: false }
    }
    const events = await Effect.runPromise(replay(acpReplayMapping, [meta, line], { threadId: ThreadId.make("t") }))
    expect(events).toMatchObject([
      {
        type: "runtime.warning",
        createdAt: "2026-11-30T00:00:00.005Z",
        payload: { code: "invalid_line", detail: { reason: "not_json", bytes: 4, truncated: false } },
        raw: { source: "acp.stdout", payload: "oops" }
      }
    ])
  })
})

describe("agent line decoding (the transport's own NDJSON reader)", () => {
  const decode = (text: string) => decodeAgentLine({ data: Buffer.from(text, "utf8"), bytes: bytes(text) })

  it("passes JSON-RPC requests, notifications and responses through", () => {
    for (const message of [
      { jsonrpc: "2.0", id: 1, method: "cursor/ask_question", params: {} },
      { jsonrpc: "2.0", method: "session/update", params: {} },
      { jsonrpc: "2.0", id: "a", result: {} },
      { jsonrpc: "2.0", id: 2, error: { code: -1, message: "no" } }
    ]) {
      expect(decode(` ${JSON.stringify(message)}\r`)).toEqual({ kind: "message", message })
    }
    expect(decode("  \r")).toEqual({ kind: "blank" })
  })

  it("classifies every other line, keeping at most INVALID_LINE_MAX_BYTES of it", () => {
    for (const { line, reason } of MALFORMED) {
      expect(decode(line)).toMatchObject({ kind: "invalid", line: { reason, text: kept(line), bytes: bytes(line) } })
    }
    const nullId = decode('{"jsonrpc":"2.0","id":null,"method":"x"}')
    expect(nullId).toMatchObject({ kind: "invalid", line: { reason: "not_jsonrpc" } })
    expect(decode("{bad").kind === "invalid" && decode("{bad")).toMatchObject({ line: { error: expect.any(String) } })
  })

  it("splits lines across chunks and cuts a line over the size limit without buffering it", () => {
    const splitter = makeLineSplitter(64)
    const long = "y".repeat(200)
    const lines = [
      ...splitter.push(Buffer.from('{"a":')),
      ...splitter.push(Buffer.from(`1}\n${long.slice(0, 100)}`)),
      ...splitter.push(Buffer.from(`${long.slice(100)}\nlast`))
    ]
    const flushed = splitter.flush()
    expect(lines.map((l) => [l.data.toString("utf8"), l.bytes])).toEqual([
      ['{"a":1}', 7],
      [long.slice(0, 64), 200]
    ])
    expect(flushed && [flushed.data.toString("utf8"), flushed.bytes]).toEqual(["last", 4])
    expect(splitter.flush()).toBeUndefined()
    expect(decodeAgentLine(lines[1]!)).toMatchObject({ kind: "invalid", line: { reason: "too_long", bytes: 200 } })
  })
})
