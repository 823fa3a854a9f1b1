import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeAcpTransport } from "../../../src/provider/acp/AcpTransport.ts"

/**
 * Every ACP agent's stdout is split into lines on its own. The ACP dialect, one object for all
 * ACP sessions, used to carry the line splitter, so all agents' bytes went through the same one
 * (issue 31, item 4: a line abandoned over the bound swallowed the next agent's first line).
 * Two agents at once show it without a huge line: one agent's line still being written when
 * another's arrives. The stand-ins make that order deterministic: agent A writes a whole line and
 * the head of a second one in one write (under PIPE_BUF: one chunk), so once its first line is
 * taken the head has been read; only then is agent B told to write its line, and A its line's end.
 */
const dir = mkdtempSync(join(tmpdir(), "planbridge-acp-lines-apart-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const message = (method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", method, params })

/** Writes `before` at once, then `after` once a line arrives on its stdin. */
const standIn = (before: string, after: string) => `
  process.stdout.write(${JSON.stringify(before)})
  process.stdin.once("data", () => process.stdout.write(${JSON.stringify(after)}))
  setInterval(() => {}, 60000)`

const agent = (before: string, after: string) =>
  makeAcpTransport({
    command: process.execPath,
    args: ["-e", standIn(before, after)],
    cwd: dir,
    env: { PATH: process.env.PATH ?? "" }
  })

describe("two ACP agents at once", () => {
  it("each agent's lines are read whole, whatever the other one writes meanwhile", async () => {
    const text = "the end of a line written in two parts"
    const head = message("a/second", { text }).slice(0, 40)
    const tail = message("a/second", { text }).slice(40)
    const taken = await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* agent(`${message("a/first", {})}\n${head}`, `${tail}\n`)
        const b = yield* agent("", `${message("b/only", { n: 1 })}\n`)
        const first = yield* a.take
        // A's head has been read with its first line: B's whole line arrives while it waits.
        yield* b.write({ go: true })
        const fromB = yield* b.take
        yield* a.write({ go: true })
        const second = yield* a.take
        return [first, fromB, second]
      }).pipe(Effect.scoped)
    )
    expect(taken).toEqual([
      { dir: "in", msg: { jsonrpc: "2.0", method: "a/first", params: {} } },
      { dir: "in", msg: { jsonrpc: "2.0", method: "b/only", params: { n: 1 } } },
      { dir: "in", msg: { jsonrpc: "2.0", method: "a/second", params: { text } } }
    ])
  }, 20_000)
})
