import { PROTOCOL_VERSION } from "@planbridge/contracts"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import WebSocket from "ws"
import { codexDemoTurn } from "../src/demo/codexDemoModel.ts"
import { startMockResponsesModel } from "../src/demo/mockResponsesModel.ts"
import { startServer } from "../src/http/HttpServer.ts"
import { makeCodexAdapter } from "../src/provider/codex/CodexAdapter.ts"
import { codexConfigToml } from "../src/provider/codex/CodexHome.ts"
import { codexCapabilities } from "../src/provider/codex/CodexMappingState.ts"
import { descendantsCpuMs } from "./descendantsCpu.ts"

/**
 * Adapter overhead on a real Codex turn: the same scripted plan turn (the demo model's "plan"
 * scenario: a streamed `<proposed_plan>`) on the real `codex app-server` from node_modules,
 * driven once through Planbridge (server, adapter, SQLite, WebSocket client) and once by a bare
 * JSON-RPC client on stdio, alternately, in one run. Each side keeps one thread; a turn is timed
 * from sending the start to receiving its completion. Needs the loopback-only namespace
 * (`npm run bench` runs in it): the app-server must reach nothing but the scripted model.
 */

const MODEL = "gpt-5.5"
const KEY_VAR = "PLANBRIDGE_BENCH_KEY"
const KEY = "planbridge-bench-key"
const TEXT = "Make a plan for a greeting service."
const TURN_TIMEOUT_MS = 120_000

const codexScript = () =>
  join(dirname(createRequire(import.meta.url).resolve("@openai/codex/package.json")), "bin", "codex.js")

const timeout = <T>(promise: Promise<T>, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer in ${TURN_TIMEOUT_MS} ms`)), TURN_TIMEOUT_MS)
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e instanceof Error ? e : new Error(String(e))))
    )
  })

interface Side {
  /** The turn's wall time in ms. */
  readonly turn: () => Promise<number>
  /** CPU time (ms) of the side's app-server processes so far. */
  readonly providerCpuMs: () => number
  readonly close: () => Promise<void>
}

type Json = Record<string, unknown>

/** A bare newline-delimited JSON-RPC client of `codex app-server`, as thin as a client can be. */
const bareSide = async (baseUrl: string, cwd: string): Promise<Side & { readonly pid: number }> => {
  const home = mkdtempSync(join(tmpdir(), "planbridge-bench-codex-"))
  writeFileSync(join(home, "config.toml"), codexConfigToml({ model: MODEL, baseUrl, envKey: KEY_VAR }), {
    mode: 0o600
  })
  const child = spawn(process.execPath, [codexScript(), "app-server"], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? home, CODEX_HOME: home, [KEY_VAR]: KEY },
    stdio: ["pipe", "pipe", "pipe"]
  })
  child.stderr.resume()
  const pid = child.pid
  if (pid === undefined) throw new Error("codex app-server: could not be spawned")
  let nextId = 0
  const pending = new Map<number, { resolve: (m: Json) => void; reject: (e: Error) => void }>()
  const listeners = new Set<(m: Json) => void>()
  createInterface({ input: child.stdout }).on("line", (line) => {
    const msg = JSON.parse(line) as Json
    if (typeof msg.id === "number" && msg.method === undefined) {
      const waiter = pending.get(msg.id)
      pending.delete(msg.id)
      if (msg.error !== undefined) waiter?.reject(new Error(JSON.stringify(msg.error)))
      else waiter?.resolve(msg.result as Json)
    } else if (msg.id !== undefined) {
      // The plan scenario asks nothing: a server request here means the script changed.
      child.stdin.write(
        JSON.stringify({ id: msg.id, error: { code: -32601, message: "bench client answers nothing" } }) + "\n"
      )
    } else for (const listener of listeners) listener(msg)
  })
  const call = (method: string, params: Json) =>
    timeout(
      new Promise<Json>((resolve, reject) => {
        const id = ++nextId
        pending.set(id, { resolve, reject })
        child.stdin.write(JSON.stringify({ id, method, params }) + "\n")
      }),
      method
    )
  const notified = (method: string) =>
    new Promise<Json>((resolve) => {
      const listener = (m: Json) => {
        if (m.method !== method) return
        listeners.delete(listener)
        resolve(m)
      }
      listeners.add(listener)
    })
  await call("initialize", {
    clientInfo: { name: "bench", title: "bench", version: "0" },
    capabilities: { experimentalApi: true }
  })
  child.stdin.write(JSON.stringify({ method: "initialized" }) + "\n")
  // The thread Planbridge starts: resumable, so the app-server writes its rollout (an ephemeral one
  // skips that work, and the comparison charged ~15 ms of the app-server's own writing to Planbridge).
  const started = await call("thread/start", { cwd, approvalPolicy: "never", sandbox: "read-only", ephemeral: false })
  const threadId = (started.thread as Json).id as string
  return {
    turn: async () => {
      const t0 = performance.now()
      const completed = notified("turn/completed")
      await call("turn/start", {
        threadId,
        input: [{ type: "text", text: TEXT, text_elements: [] }],
        collaborationMode: {
          mode: "plan",
          settings: { model: MODEL, reasoning_effort: null, developer_instructions: null }
        }
      })
      await timeout(completed, "turn/completed")
      return performance.now() - t0
    },
    pid,
    // Its child (node's launcher of the codex binary) and what that runs.
    providerCpuMs: () => descendantsCpuMs(process.pid) - descendantsCpuMs(process.pid, [pid]),
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
      rmSync(home, { recursive: true, force: true })
    }
  }
}

/** Planbridge's side: the server with the Codex adapter, and a WebSocket client that only parses JSON. */
const planbridgeSide = async (baseUrl: string, cwd: string, barePid: number): Promise<Side> => {
  const dataDir = mkdtempSync(join(tmpdir(), "planbridge-bench-data-"))
  const server = await startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: [
      {
        adapter: makeCodexAdapter({ model: MODEL, baseUrl, envKey: KEY_VAR, apiKey: KEY }),
        capabilities: codexCapabilities,
        label: "Codex"
      }
    ]
  })
  const socket = new WebSocket(server.url.replace(/^http/, "ws") + "/ws", {
    headers: { authorization: `Bearer ${server.token}` }
  })
  await new Promise((resolve, reject) => (socket.once("open", resolve), socket.once("error", reject)))
  const waiters = new Set<(f: Json) => void>()
  socket.on("message", (data) => {
    const frame = JSON.parse(String(data)) as Json
    for (const waiter of waiters) waiter(frame)
  })
  const next = (match: (f: Json) => boolean, what: string) =>
    timeout(
      new Promise<Json>((resolve) => {
        const waiter = (f: Json) => {
          if (!match(f)) return
          waiters.delete(waiter)
          resolve(f)
        }
        waiters.add(waiter)
      }),
      what
    )
  let nextId = 0
  const command = async (command: Json) => {
    const id = `b${++nextId}`
    const answer = next((f) => (f.type === "result" || f.type === "error") && f.id === id, String(command.type))
    socket.send(JSON.stringify({ type: "command", id, command }))
    const frame = await answer
    if (frame.type === "error") throw new Error(`${String(command.type)}: ${JSON.stringify(frame.error)}`)
    return frame.result as Json
  }
  const welcome = next((f) => f.type === "welcome", "welcome")
  socket.send(JSON.stringify({ type: "hello", protocolVersion: PROTOCOL_VERSION }))
  await welcome
  const { threadId } = (await command({ type: "session.start", provider: "codex", cwd, mode: "plan" })) as {
    threadId: string
  }
  await command({ type: "thread.subscribe", threadId })
  const completedOf = (f: Json) =>
    f.type === "event" && f.threadId === threadId && (f.event as Json).type === "turn.completed"
  return {
    turn: async () => {
      const t0 = performance.now()
      const completed = next(completedOf, "turn.completed")
      await command({ type: "turn.start", threadId, text: TEXT })
      await completed
      return performance.now() - t0
    },
    // The server's app-server (under its process-group guard): everything this process runs but the bare side.
    providerCpuMs: () => descendantsCpuMs(process.pid, [barePid]),
    close: async () => {
      socket.close()
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** Each turn of one side: wall time, and CPU time (ms) of this process and of the side's app-server. */
export interface SideTurns {
  readonly wallMs: Array<number>
  /** This process: the server and the client (or the bare client), the scripted model's share included. */
  readonly cpuMs: Array<number>
  /** The side's app-server processes (10 ms resolution per turn). */
  readonly providerCpuMs: Array<number>
}

export interface CodexTurnResult {
  readonly planbridge: SideTurns
  readonly bare: SideTurns
}

const sideTurns = (): SideTurns => ({ wallMs: [], cpuMs: [], providerCpuMs: [] })

/** Runs a turn, and adds its wall time and CPU times to the side's lists. */
const timed = async (side: Side, turns: SideTurns) => {
  // Outside this process's CPU window: reading /proc costs ~1 ms.
  const providerBefore = side.providerCpuMs()
  const before = process.cpuUsage()
  turns.wallMs.push(await side.turn())
  const used = process.cpuUsage(before)
  turns.cpuMs.push((used.user + used.system) / 1000)
  turns.providerCpuMs.push(side.providerCpuMs() - providerBefore)
}

/** One warm-up turn per side, then `repetitions` turns each, alternating which side goes first. */
export const benchCodexTurn = async (repetitions: number): Promise<CodexTurnResult> => {
  if (process.env.PLANBRIDGE_IN_NETNS !== "1")
    throw new Error("the Codex turn bench runs real programs: run it in the loopback namespace (npm run bench)")
  const model = await startMockResponsesModel({ maxLogged: 10, unscripted: codexDemoTurn({ questions: false }) })
  const cwd = mkdtempSync(join(tmpdir(), "planbridge-bench-cwd-"))
  const sides: Array<Side> = []
  try {
    const bare = await bareSide(model.baseUrl, cwd)
    sides.push(bare)
    const planbridge = await planbridgeSide(model.baseUrl, cwd, bare.pid)
    sides.push(planbridge)
    await bare.turn()
    await planbridge.turn()
    const result = { planbridge: sideTurns(), bare: sideTurns() }
    for (let i = 0; i < repetitions; i++) {
      if (i % 2 === 0) {
        await timed(planbridge, result.planbridge)
        await timed(bare, result.bare)
      } else {
        await timed(bare, result.bare)
        await timed(planbridge, result.planbridge)
      }
    }
    return result
  } finally {
    for (const side of sides.reverse()) await side.close()
    await model.close()
    rmSync(cwd, { recursive: true, force: true })
  }
}
