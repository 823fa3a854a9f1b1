import { PROTOCOL_VERSION } from "@planbridge/contracts"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import BetterSqlite3 from "better-sqlite3"
import WebSocket, { WebSocketServer } from "ws"
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
 * driven through Planbridge (server, adapter, SQLite, WebSocket client), by a bare JSON-RPC client
 * on stdio (the limit), and through the thinnest relay that keeps commit-before-publish (the floor
 * of any such service here), in turn, in one run. Each side keeps one thread; a turn is timed
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

/** A thread on a `codex app-server` of its own, driven by a newline-delimited JSON-RPC client as thin as a client can be. */
interface AppServerThread {
  /** Sends `turn/start` for the thread; resolves with the app-server's answer (the turn then streams). */
  readonly startTurn: () => Promise<Json>
  /** Calls `listener` with every notification, and with every line it arrived in. */
  readonly onNotification: (listener: (message: Json, line: string) => void) => () => void
  readonly pid: number
  readonly close: () => Promise<void>
}

const appServerThread = async (baseUrl: string, cwd: string): Promise<AppServerThread> => {
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
  const listeners = new Set<(m: Json, line: string) => void>()
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
    } else for (const listener of listeners) listener(msg, line)
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
    startTurn: () =>
      call("turn/start", {
        threadId,
        input: [{ type: "text", text: TEXT, text_elements: [] }],
        collaborationMode: {
          mode: "plan",
          settings: { model: MODEL, reasoning_effort: null, developer_instructions: null }
        }
      }),
    onNotification: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    pid,
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
      rmSync(home, { recursive: true, force: true })
    }
  }
}

/** The CPU time (ms) of the app-server `pid` and of what it runs. */
const subtreeCpuMs = (pid: number) => descendantsCpuMs(process.pid) - descendantsCpuMs(process.pid, [pid])

/** Resolves with the next notification of `method` on the thread. */
const notified = (thread: AppServerThread, method: string) =>
  new Promise<Json>((resolve) => {
    const stop = thread.onNotification((m) => {
      if (m.method !== method) return
      stop()
      resolve(m)
    })
  })

/** The limit: the bare JSON-RPC client itself. */
const bareSide = async (baseUrl: string, cwd: string): Promise<Side & { readonly pid: number }> => {
  const thread = await appServerThread(baseUrl, cwd)
  return {
    turn: async () => {
      const t0 = performance.now()
      const completed = notified(thread, "turn/completed")
      await thread.startTurn()
      await timeout(completed, "turn/completed")
      return performance.now() - t0
    },
    pid: thread.pid,
    providerCpuMs: () => subtreeCpuMs(thread.pid),
    close: thread.close
  }
}

/**
 * The floor of any service between the app-server and a client that keeps this guarantees:
 * the bare client's thread, with every notification committed to SQLite (one row each, a WAL file
 * with the server's pragmas, the lines of one read committed together) before it is relayed as is
 * over a loopback WebSocket to a client that parses it; the client starts the turn through the
 * relay. No validation, no mapping, no projection: what it costs beyond the bare client is what
 * commit-before-publish and one WebSocket hop cost on this machine, next to the app-server.
 */
const floorSide = async (baseUrl: string, cwd: string): Promise<Side & { readonly pid: number }> => {
  const thread = await appServerThread(baseUrl, cwd)
  const dir = mkdtempSync(join(tmpdir(), "planbridge-bench-floor-"))
  const db = new BetterSqlite3(join(dir, "floor.db"))
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  db.exec("create table events (seq integer primary key, payload text not null)")
  const insert = db.prepare("insert into events (payload) values (?)")
  const commit = db.transaction((lines: ReadonlyArray<string>) => {
    for (const line of lines) insert.run(line)
  })
  const relay = new WebSocketServer({ host: "127.0.0.1", port: 0 })
  await new Promise<void>((resolve) => relay.once("listening", () => resolve()))
  const serverSocket = new Promise<WebSocket>((resolve) => relay.once("connection", resolve))
  const client = new WebSocket(`ws://127.0.0.1:${(relay.address() as { port: number }).port}`)
  await new Promise((resolve, reject) => (client.once("open", resolve), client.once("error", reject)))
  const toClient = await serverSocket
  let failTurn: ((error: unknown) => void) | undefined
  toClient.on("message", () => void thread.startTurn().catch((error: unknown) => failTurn?.(error)))
  // The lines of one read arrive in one synchronous run: committed together in a microtask, as
  // Planbridge's writer does, then relayed.
  let unsent: Array<string> = []
  thread.onNotification((_message, line) => {
    if (unsent.length === 0)
      queueMicrotask(() => {
        const lines = unsent
        unsent = []
        commit(lines)
        for (const l of lines) toClient.send(l)
      })
    unsent.push(line)
  })
  let onFrame: ((frame: Json) => void) | undefined
  client.on("message", (data) => onFrame?.(JSON.parse(String(data)) as Json))
  return {
    turn: async () => {
      const t0 = performance.now()
      const completed = new Promise<void>((resolve, reject) => {
        onFrame = (frame) => frame.method === "turn/completed" && resolve()
        failTurn = reject
      })
      client.send("start")
      await timeout(completed, "turn/completed (relayed)")
      return performance.now() - t0
    },
    pid: thread.pid,
    providerCpuMs: () => subtreeCpuMs(thread.pid),
    close: async () => {
      client.close()
      await new Promise<void>((resolve) => relay.close(() => resolve()))
      db.close()
      rmSync(dir, { recursive: true, force: true })
      await thread.close()
    }
  }
}

/** Planbridge's side: the server with the Codex adapter, and a WebSocket client that only parses JSON. */
const planbridgeSide = async (baseUrl: string, cwd: string, otherPids: ReadonlyArray<number>): Promise<Side> => {
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
    // The server's app-server (under its process-group guard): everything this process runs but the other sides'.
    providerCpuMs: () => descendantsCpuMs(process.pid, otherPids),
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
  readonly floor: SideTurns
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

/** One warm-up turn per side, then `repetitions` turns each, rotating which side goes first. */
export const benchCodexTurn = async (repetitions: number): Promise<CodexTurnResult> => {
  if (process.env.PLANBRIDGE_IN_NETNS !== "1")
    throw new Error("the Codex turn bench runs real programs: run it in the loopback namespace (npm run bench)")
  const model = await startMockResponsesModel({
    maxLogged: 10,
    unscripted: codexDemoTurn({ questions: false, planTags: true })
  })
  const cwd = mkdtempSync(join(tmpdir(), "planbridge-bench-cwd-"))
  const sides: Array<Side> = []
  try {
    const bare = await bareSide(model.baseUrl, cwd)
    sides.push(bare)
    const floor = await floorSide(model.baseUrl, cwd)
    sides.push(floor)
    const planbridge = await planbridgeSide(model.baseUrl, cwd, [bare.pid, floor.pid])
    sides.push(planbridge)
    const result = { planbridge: sideTurns(), bare: sideTurns(), floor: sideTurns() }
    const order: ReadonlyArray<[Side, SideTurns]> = [
      [planbridge, result.planbridge],
      [bare, result.bare],
      [floor, result.floor]
    ]
    for (const [side] of order) await side.turn()
    for (let i = 0; i < repetitions; i++)
      for (let k = 0; k < order.length; k++) {
        const [side, turns] = order[(i + k) % order.length]!
        await timed(side, turns)
      }
    return result
  } finally {
    for (const side of sides.reverse()) await side.close()
    await model.close()
    rmSync(cwd, { recursive: true, force: true })
  }
}
