import { query } from "@anthropic-ai/claude-agent-sdk"
import { createInterface } from "node:readline"
import { describe, expect, it } from "vitest"
import { CLAUDE_READ_AHEAD, makeClaudeProcess, sdkReadAhead } from "../../../src/provider/claude/ClaudeProcess.ts"
import { makeFlowProbe } from "../../../src/provider/inbound.ts"

/**
 * Issue 13, item 4, for Claude: the Agent SDK (0.3.333) reads every line of the CLI's stdout
 * into a queue of its own as fast as it comes, whatever the session has taken, so the bounded
 * queue has to be the SDK's: the CLI's stdout is paced by the depth of that queue
 * (`sdkReadAhead`), read again once the session has taken messages.
 */

const until = async (condition: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  return condition()
}

describe("Claude: reading the CLI's stdout is paced by the SDK's read-ahead", () => {
  it("the pinned SDK keeps its read-ahead where sdkReadAhead looks (an upgrade that moves it fails here)", async () => {
    const q = query({
      prompt: (async function* () {})(),
      options: {
        spawnClaudeCodeProcess: (options) =>
          makeClaudeProcess().spawn({
            ...options,
            command: process.execPath,
            args: ["-e", "setInterval(() => {}, 1000)"]
          })
      }
    })
    try {
      const readAhead = sdkReadAhead(q)
      expect(readAhead).toBeDefined()
      expect(readAhead!()).toBe(0)
    } finally {
      q.close()
    }
    expect(sdkReadAhead({})).toBeUndefined()
  })

  const title = `a CLI writing 20,000 lines: the SDK's queue stays near ${CLAUDE_READ_AHEAD}, the CLI waits`
  it(title, async () => {
    const count = 20_000
    const probe = makeFlowProbe()
    const handle = makeClaudeProcess(undefined, probe)
    const script = `
      let i = 0
      const next = () => {
        while (i < ${count}) {
          const ok = process.stdout.write(JSON.stringify({ type: "stream_event", i }) + "\\n")
          i += 1
          if (!ok) return process.stdout.once("drain", next)
        }
        process.stdout.end(() => process.stderr.write("done"))
      }
      next()`
    const spawned = handle.spawn({
      command: process.execPath,
      args: ["-e", script],
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? "" },
      signal: new AbortController().signal
    })
    // Like the SDK: every line read at once into an unbounded queue.
    const sdkQueue: Array<{ readonly i: number }> = []
    let ended = false
    const lines = createInterface({ input: spawned.stdout })
    lines.on("line", (line) => sdkQueue.push(JSON.parse(line) as { i: number }))
    lines.once("close", () => (ended = true))
    handle.paceBy(() => sdkQueue.length)
    let maxQueued = 0
    const watch = setInterval(() => (maxQueued = Math.max(maxQueued, sdkQueue.length)), 1)

    // The session takes nothing for a while: the queue stops growing and the CLI cannot finish.
    expect(await until(() => probe.pauses > 0)).toBe(true)
    await new Promise((r) => setTimeout(r, 300))
    // The stand-in says "done" on stderr (kept by the handle) once its last line is written.
    expect(handle.stderrTail()).toBe("")
    // At most the bound plus what one read of the pipe (64 KiB) brought.
    const perRead = Math.ceil((64 * 1024) / JSON.stringify({ type: "stream_event", i: 0 }).length)
    expect(sdkQueue.length).toBeGreaterThanOrEqual(CLAUDE_READ_AHEAD)
    expect(sdkQueue.length).toBeLessThanOrEqual(CLAUDE_READ_AHEAD + perRead)

    // The session takes every message, one by one, telling the handle each time.
    const taken: Array<number> = []
    while (!ended || sdkQueue.length > 0) {
      const next = sdkQueue.shift()
      if (next === undefined) {
        await new Promise((r) => setImmediate(r))
        continue
      }
      taken.push(next.i)
      handle.taken()
      if (taken.length % 100 === 0) await new Promise((r) => setImmediate(r))
    }
    clearInterval(watch)
    expect(taken).toEqual(Array.from({ length: count }, (_, i) => i))
    expect(maxQueued).toBeLessThanOrEqual(CLAUDE_READ_AHEAD + perRead)
    expect(probe.highWaterLines).toBeLessThanOrEqual(CLAUDE_READ_AHEAD + perRead)
    expect(await until(() => handle.stderrTail() === "done")).toBe(true)
  })
})
