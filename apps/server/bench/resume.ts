import { PROTOCOL_VERSION, TURN_WINDOW, type OlderTurns, type ServerFrame } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import WebSocket from "ws"
import { startServer, type RunningServer } from "../src/http/HttpServer.ts"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { chunkOf, CHUNK } from "./snapshot.ts"

const openClient = (url: string, headers: Record<string, string>) =>
  new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(url, { headers })
    socket.once("open", () => resolve(socket))
    socket.once("error", reject)
  })

const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * Resume time for a thread of `count` events, end to end through the server and a WebSocket
 * client in this process: a client that missed the last 1,000 events (backlog), a client with no
 * cursor (snapshot: the window of the latest turns), a client whose cursor is too old (snapshot),
 * and, for comparison with the whole-history snapshots of earlier rounds, a client that takes the
 * snapshot and then every page back (`thread.history`, `TURN_WINDOW.max` turns a page).
 */
export const benchResume = async (count: number, samples = 7) => {
  const dir = mkdtempSync(join(tmpdir(), "planbridge-bench-resume-"))
  let server: RunningServer | undefined
  try {
    server = await startServer({ dataDir: dir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
    const running = server
    const threadId = "resume-bench-thread"
    for (let done = 0, index = 0; done < count; index++) {
      const chunk = chunkOf(index, Math.min(CHUNK, count - done), threadId)
      for (let i = 0; i < chunk.length; i += 5_000)
        await running.runtime.runPromise(
          Effect.gen(function* () {
            yield* (yield* RuntimeIngestion).ingestAll(chunk.slice(i, i + 5_000))
          })
        )
      done += chunk.length
    }
    /**
     * After one warm-up (JIT), the median of `samples` resumes (one sample on a shared machine
     * says little), and the median of this process's CPU time for one (server and client: steadier
     * than wall time when other work takes the cores).
     */
    const medianOf = async (resume: () => Promise<{ ms: number; bytes: number }>) => {
      await resume()
      const walls: Array<number> = []
      const cpus: Array<number> = []
      let bytes = 0
      for (let i = 0; i < samples; i++) {
        const before = process.cpuUsage()
        const r = await resume()
        walls.push(r.ms)
        bytes = r.bytes
        const used = process.cpuUsage(before)
        cpus.push((used.user + used.system) / 1000)
      }
      return { wallMs: median(walls), cpuMs: median(cpus), bytes }
    }
    const time = async (afterSeq: number | undefined, wholeHistory = false) => {
      const socket = await openClient(`${running.url.replace("http", "ws")}/ws`, {
        authorization: `Bearer ${running.token}`
      })
      const started = performance.now()
      let bytes = 0
      let older: OlderTurns | null = null
      let pages = 0
      const send = (id: string, command: object) => socket.send(JSON.stringify({ type: "command", id, command }))
      const done = new Promise<number>((resolve) => {
        socket.on("message", (data) => {
          const text = String(data)
          bytes += text.length
          const frame = JSON.parse(text) as ServerFrame
          if (frame.type === "snapshot") older = frame.snapshot.olderTurns
          if (frame.type !== "result") return
          if (frame.id !== "s") older = (frame.result as { olderTurns: OlderTurns | null }).olderTurns
          if (!wholeHistory || older === null) return resolve(performance.now() - started)
          send(`h${pages++}`, { type: "thread.history", threadId, before: older.before, limit: TURN_WINDOW.max })
        })
      })
      socket.send(JSON.stringify({ type: "hello", protocolVersion: PROTOCOL_VERSION }))
      send("s", { type: "thread.subscribe", threadId, ...(afterSeq === undefined ? {} : { afterSeq }) })
      const ms = await done
      socket.terminate()
      return { ms, bytes }
    }
    return {
      events: count,
      backlog1000: await medianOf(() => time(count - 1_000)),
      snapshot: await medianOf(() => time(undefined)),
      tooOldCursor: await medianOf(() => time(1)),
      wholeHistory: await medianOf(() => time(undefined, true))
    }
  } finally {
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
