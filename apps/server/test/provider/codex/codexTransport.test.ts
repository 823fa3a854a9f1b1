import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { isExit, type CodexLine } from "../../../src/provider/codex/CodexLine.ts"
import { makeCodexTransport } from "../../../src/provider/codex/CodexTransport.ts"

const isExitInput = (input: CodexLine | undefined) => input !== undefined && isExit(input)

/**
 * The JSON-RPC stdio transport with tiny stand-in children (plain Node scripts): timeouts,
 * bounded stderr, the exit failing what is pending, and the process group killed on close.
 */

const node = (script: string) => ({
  command: process.execPath,
  args: ["-e", script],
  env: { PATH: process.env.PATH ?? "" },
  cwd: process.cwd()
})

/** Running, i.e. neither gone nor a zombie waiting to be reaped. */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === false
  } catch {
    return false
  }
}

/** A killed process disappears asynchronously; poll its state (bounded) rather than sleep blindly. */
const gone = async (pid: number) => {
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  return !alive(pid)
}

describe("Codex JSON-RPC transport", () => {
  it("a request without a response times out with a typed error", async () => {
    const error = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const t = yield* makeCodexTransport({ ...node("process.stdin.resume()"), requestTimeoutMs: 100 })
          const request = t.prepareRequest("ping", {})
          yield* t.write(request.msg)
          return yield* Effect.flip(request.response)
        })
      )
    )
    expect(error).toMatchObject({ _tag: "AdapterError", kind: "timeout" })
  })

  it("responses complete their request; the exit fails what is still pending and arrives last", async () => {
    const script = `
      const rl = require("node:readline").createInterface({ input: process.stdin })
      rl.on("line", (line) => {
        const msg = JSON.parse(line)
        if (msg.method === "echo") process.stdout.write(JSON.stringify({ id: msg.id, result: msg.params }) + "\\n")
        if (msg.method === "die") { process.stderr.write("x".repeat(5000)); process.stdout.write('{"method":"bye"}\\n'); process.exit(3) }
      })`
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const t = yield* makeCodexTransport({ ...node(script), stderrLimitBytes: 1000 })
          const echo = t.prepareRequest("echo", { n: 1 })
          yield* t.write(echo.msg)
          // A response completes its request once the session mapped it (`mapped`).
          const inputs: Array<CodexLine> = [yield* t.take]
          t.mapped(inputs[0]!)
          const echoed = yield* echo.response
          const hang = t.prepareRequest("hang", {})
          yield* t.write(hang.msg)
          yield* t.write({ method: "die" })
          const hangError = yield* Effect.flip(hang.response)
          while (!isExitInput(inputs.at(-1))) inputs.push(yield* t.take)
          const late = yield* Effect.flip(t.write({ method: "echo" }))
          return { echoed, hangError, inputs, stderr: t.stderr(), late }
        })
      )
    )
    expect(result.echoed).toEqual({ n: 1 })
    expect(result.hangError.kind).toBe("provider_exited")
    expect(result.inputs.map((i) => i.dir)).toEqual(["in", "in", "local"])
    expect(result.inputs.at(-1)).toEqual({
      dir: "local",
      msg: { kind: "exit", code: 3, signal: null, expected: false }
    })
    expect(result.stderr.length).toBe(1000)
    expect(result.late.kind).toBe("provider_exited")
  })

  it("closing the scope kills the whole process group, grandchildren included", async () => {
    const script = `
      const child = require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
      process.stdout.write(JSON.stringify({ method: "child", params: { pid: child.pid } }) + "\\n")
      setInterval(() => {}, 1000)`
    const pids = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const t = yield* makeCodexTransport(node(script))
          const first = yield* t.take
          const grandchild = first.dir === "in" ? (first.msg as { params: { pid: number } }).params.pid : -1
          expect(alive(t.pid) && alive(grandchild)).toBe(true)
          return { child: t.pid, grandchild }
        })
      )
    )
    expect(await gone(pids.child)).toBe(true)
    expect(await gone(pids.grandchild)).toBe(true)
  })
})
