import type { ThreadId } from "@planbridge/contracts"
import { describe, expect, it } from "vitest"
import { makeClaudeProcess } from "../../../src/provider/claude/ClaudeProcess.ts"
import type { ClaudeLine } from "../../../src/provider/claude/ClaudeTranscript.ts"
import { MAX_LINE_BYTES } from "../../../src/provider/lines.ts"
import { local, makeMapping } from "./claudeLines.ts"

/**
 * Issue 13, item 2, for Claude: the Agent SDK (0.3.333) reads the CLI's stdout with
 * `node:readline`, which has no line bound. Planbridge hands the SDK a bounded copy of it: whole
 * lines pass unchanged; a line over `MAX_LINE_BYTES` ends the stream before its first byte, the
 * CLI's group is killed, and the session records why (a fatal `runtime.error`, then `crashed`).
 */
const spawnScript = (script: string) =>
  makeClaudeProcess().spawn({
    command: process.execPath,
    args: ["-e", script],
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? "" },
    signal: new AbortController().signal
  })

const readAll = (stream: NodeJS.ReadableStream) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    stream.once("error", reject)
  })

describe("Claude Code's stdout is bounded in front of the SDK", () => {
  it("lines pass unchanged; a line over the bound ends the stream before it and kills the CLI", async () => {
    // Two lines, then 33 MiB of one line in 1 MiB writes (never ended), then nothing: the CLI stand-in
    // does not exit by itself.
    const script = `
      process.stdout.write('{"type":"a"}\\n{"type":')
      process.stdout.write('"b"}\\n')
      const mib = Buffer.alloc(1024 * 1024, 120)
      let left = 33
      const more = () => {
        while (left > 0) { left -= 1; if (!process.stdout.write(mib)) return process.stdout.once("drain", more) }
      }
      more()
      setInterval(() => {}, 60000)`
    const handle = makeClaudeProcess()
    const spawned = handle.spawn({
      command: process.execPath,
      args: ["-e", script],
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? "" },
      signal: new AbortController().signal
    })
    expect(await readAll(spawned.stdout)).toBe('{"type":"a"}\n{"type":"b"}\n')
    const exit = await handle.exited
    expect(exit.signal).toBe("SIGKILL")
    expect(handle.lineTooLong()?.bytes).toBeGreaterThan(MAX_LINE_BYTES)
  }, 10_000)

  it("a stream of ordinary lines reaches the SDK whole, also its unterminated last line", async () => {
    const line = (i: number) => JSON.stringify({ type: "x", i, pad: "p".repeat(i % 300) })
    const make = `Array.from({ length: 2000 }, (_, i) => (${line.toString()})(i)).join("\\n")`
    // Written in pieces that end mid-line, so lines cross chunk boundaries.
    const write = "for (let i = 0; i < text.length; i += 4093) process.stdout.write(text.slice(i, i + 4093))"
    const spawned = spawnScript(`const text = ${make}; ${write}`)
    const expected = Array.from({ length: 2000 }, (_, i) => line(i)).join("\n")
    expect(await readAll(spawned.stdout)).toBe(expected)
  })

  it("the session's record: a fatal runtime.error naming the bound, the turn failed, the session crashed", () => {
    const map = makeMapping("thread" as ThreadId)
    const message = `Claude Code wrote a line over the line bound of ${MAX_LINE_BYTES} bytes`
    const lines: ReadonlyArray<ClaudeLine> = [
      local(0, { kind: "start", cwd: "/w", permissionMode: "default", model: "m", sessionId: "s" }),
      local(1, { kind: "user", turnId: "turn-1", text: "go" }),
      local(2, { kind: "lineTooLong", bytes: MAX_LINE_BYTES + 1 }),
      local(3, { kind: "exit", exitKind: "crashed", exitCode: null, signal: "SIGKILL", message: `${message} …` })
    ]
    const drafts = lines.flatMap(map).filter((d) => d.type !== "session.state.changed")
    const error = drafts.find((d) => d.type === "runtime.error")
    const payload = error?.type === "runtime.error" && error.payload
    expect(payload).toMatchObject({ code: "claude.line_too_long", fatal: true })
    expect(error?.type === "runtime.error" && error.payload.message).toContain(message)
    const completed = drafts.find((d) => d.type === "turn.completed")
    const failed = { status: "failed", error: { message: `${message} …` } }
    expect(completed?.type === "turn.completed" && completed.payload).toMatchObject(failed)
    expect(drafts.at(-1)).toMatchObject({ type: "session.exited", payload: { exitKind: "crashed" } })
  })
})
