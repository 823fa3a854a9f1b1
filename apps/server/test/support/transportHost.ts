// Starts one provider transport (`acp`, `codex` or `claude`, as argv[2]) on a child that ignores
// the end of its stdin and starts a tool (`sleep`), and prints `{"provider","tool"}` pids as one
// line; then idles. A test SIGKILLs this process and checks what survives it.
import { Effect } from "effect"
import { makeAcpTransport } from "../../src/provider/acp/AcpTransport.ts"
import { makeClaudeProcess } from "../../src/provider/claude/ClaudeProcess.ts"
import { makeCodexTransport } from "../../src/provider/codex/CodexTransport.ts"

const kind = process.argv[2]
// The stand-in provider: a tool in its group, its own pid and the tool's on stdout, no exit on EOF.
const script = `
  const tool = require("node:child_process").spawn("sleep", ["600"], { stdio: "ignore" })
  process.stdout.write(JSON.stringify({ provider: process.pid, tool: tool.pid }) + "\\n")
  process.stdin.resume()
  setInterval(() => {}, 60000)`
const env = { PATH: process.env.PATH ?? "" }
const spawnOptions = { command: process.execPath, args: ["-e", script], cwd: process.cwd(), env }
const relay = (stdout: NodeJS.ReadableStream) => stdout.once("data", (chunk: Buffer) => process.stdout.write(chunk))

if (kind === "claude") {
  const signal = new AbortController().signal
  const spawned = makeClaudeProcess().spawn({ ...spawnOptions, args: [...spawnOptions.args], signal })
  relay(spawned.stdout)
} else if (kind === "codex") {
  // The transport's own reader takes stdout: its first line arrives as an invalid (non-JSON-RPC) input.
  await Effect.runPromise(
    Effect.gen(function* () {
      const transport = yield* makeCodexTransport(spawnOptions)
      const first = yield* transport.take
      process.stdout.write(`${JSON.stringify(first.dir === "in" ? first.msg : first)}\n`)
      yield* Effect.never
    }).pipe(Effect.scoped)
  )
} else if (kind === "acp") {
  await Effect.runPromise(
    Effect.gen(function* () {
      // The stand-in's line is no JSON-RPC message: it arrives as an invalid line, with its text.
      const transport = yield* makeAcpTransport(spawnOptions)
      const first = yield* transport.take
      process.stdout.write(`${(first.msg as { readonly text: string }).text}\n`)
      yield* Effect.never
    }).pipe(Effect.scoped)
  )
} else {
  throw new Error("usage: transportHost.ts acp|codex|claude")
}
