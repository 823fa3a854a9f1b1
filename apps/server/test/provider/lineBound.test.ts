import * as acp from "@agentclientprotocol/sdk"
import { ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { cursorProfile } from "../../src/provider/acp/profiles/cursor.ts"
import { codexReplayMapping } from "../../src/provider/codex/CodexReplay.ts"
import { replay } from "../../src/provider/kernel/replay.ts"
import { makeStepper } from "./acp/stepper.ts"
import { LINE_HEAD_BYTES, makeLineSplitter, MAX_LINE_BYTES } from "../../src/provider/lines.ts"

/**
 * The one line bound of every provider transport (issue 13, item 2), below the transports: the
 * bound itself, the splitter that never buffers past it, and how each mapping records a session
 * ended for a line over it (so that a replay says the same as the live session).
 */
const bound = `${MAX_LINE_BYTES} bytes`
const crashedByUs = { exitKind: "crashed", signal: "SIGKILL" }

describe("the provider line bound", () => {
  it("is 32 MiB, the ACP SDK's own message limit", () => {
    expect(MAX_LINE_BYTES).toBe(32 * 1024 * 1024)
    expect(MAX_LINE_BYTES).toBe(acp.DEFAULT_MAX_MESSAGE_BYTES)
  })

  it("a line still being read is reported over the bound as soon as it crosses it, with its head only", () => {
    const splitter = makeLineSplitter(64, 16)
    expect(splitter.push(Buffer.from(`ok\n${"z".repeat(60)}`))).toEqual([{ data: Buffer.from("ok"), bytes: 2 }])
    expect(splitter.overflow()).toBeUndefined()
    splitter.push(Buffer.from("z".repeat(10)))
    expect(splitter.overflow()).toEqual({ data: Buffer.from("z".repeat(16)), bytes: 70 })
    expect(LINE_HEAD_BYTES).toBe(4096)
  })

  it("Codex: a replayed line over the bound is a fatal runtime.error, the turn failed, crashed", async () => {
    const turn = { id: "turn-1", status: "inProgress", error: null, startedAt: null, completedAt: null }
    const head = '{"id":"q-1","method":"item/tool/requestUserInput"'
    const events = await Effect.runPromise(
      replay(
        codexReplayMapping,
        [
          { dir: "meta", provider: "codex", startedAt: "2026-01-01T00:00:00.000Z" },
          { t: 1, dir: "out", msg: { id: 1, method: "turn/start", params: { threadId: "n", input: [] } } },
          { t: 2, dir: "in", msg: { id: 1, result: { turn: { ...turn, durationMs: null } } } },
          { t: 3, dir: "local", msg: { kind: "tooLong", head, bytes: MAX_LINE_BYTES + 1 } },
          { t: 4, dir: "local", msg: { kind: "exit", code: null, signal: "SIGKILL", expected: false } }
        ],
        { threadId: ThreadId.make("thread-codex-too-long") }
      )
    )
    const error = events.find((e) => e.type === "runtime.error")
    expect(error?.type === "runtime.error" && error.payload).toMatchObject({
      code: "codex.line_too_long",
      fatal: true,
      detail: { bytes: MAX_LINE_BYTES + 1, limit: MAX_LINE_BYTES }
    })
    expect(error?.type === "runtime.error" && error.payload.message).toContain(bound)
    const completed = events.find((e) => e.type === "turn.completed")
    expect(completed?.type === "turn.completed" && completed.payload.status).toBe("failed")
    expect(completed?.type === "turn.completed" && completed.payload.error?.message).toContain(bound)
    const exited = events.at(-1)
    expect(exited?.type === "session.exited" && exited.payload).toMatchObject(crashedByUs)
    expect(exited?.type === "session.exited" && exited.payload.message).toContain(bound)
  })

  it("ACP: a line over the bound is a fatal runtime.error; the exit that follows fails the turn and is crashed", () => {
    const t = makeStepper(cursorProfile())
    t.configure({ protocolVersion: 1 }, { sessionId: "s1" }, { cwd: "/w", resumed: false })
    t.startTurn()
    const [error] = t.invalidLine({ reason: "too_long", text: "{", bytes: MAX_LINE_BYTES + 1, truncated: true })
    expect(error?.type === "runtime.error" && error.payload).toMatchObject({ code: "line_too_long", fatal: true })
    expect(error?.type === "runtime.error" && error.payload.message).toContain(bound)
    const exit = t.exited({ exitKind: "crashed", exitCode: null, signal: "SIGKILL" })
    const completed = exit.find((d) => d.type === "turn.completed")
    expect(completed?.type === "turn.completed" && completed.payload.error?.message).toContain(bound)
    const exited = exit.find((d) => d.type === "session.exited")
    expect(exited?.type === "session.exited" && exited.payload).toMatchObject(crashedByUs)
    expect(exited?.type === "session.exited" && exited.payload.message).toContain(bound)
  })
})
