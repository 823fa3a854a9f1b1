import { createServer } from "node:http"
import { availableParallelism, loadavg } from "node:os"
import type { Socket } from "node:net"
import { WebSocketServer } from "ws"
import { textFrameHeader } from "../src/ws/EventFrames.ts"
import { cleanup } from "../test/chaos/rig.ts"
import { note } from "./report.ts"
import { pacedChunk } from "../test/provider/acp/flood.ts"
import { ingestCpuPerEvent } from "./groupCommitCost.ts"
import {
  figuresOf,
  runBigLine,
  runHotThread,
  startHotClients,
  type DeliveryFigures
} from "../test/support/hotThread.ts"

/**
 * The hot-thread part (issue 31, item 5): one thread, 200 clients, the scripted Cursor agent at
 * a fixed rate and at its maximum (all lines due at once), event → client delay (receive time −
 * when its line was written at the source, the agent or the bare loop: see
 * hotThreadClients.worker.mjs) against a bare
 * broadcast of frames of the same shape and size to the same 200 clients at the same pace,
 * measured in the same run; and the server's peak memory for one 20 MiB line.
 */
const raw = (i: number, writtenAtMs: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    method: "session/update",
    params: {
      sessionId: "scripted-session",
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: pacedChunk(i, writtenAtMs) } }
    }
  })
/** A frame like Planbridge's for the agent's chunk i: the event, its `raw` line, stamped now. */
const bareFrame = (i: number, writtenAtMs: number) =>
  JSON.stringify({
    type: "event",
    threadId: "thread-bench",
    seq: i + 1,
    event: {
      eventId: `e-${i}`,
      provider: "cursor",
      threadId: "thread-bench",
      createdAt: new Date().toISOString(),
      type: "content.delta",
      turnId: "turn-1",
      itemId: "item-1",
      payload: { streamKind: "assistant_text", delta: pacedChunk(i, writtenAtMs) },
      raw: {
        source: "acp",
        direction: "in",
        method: "session/update",
        payload: JSON.parse(raw(i, writtenAtMs)) as unknown
      }
    }
  })

/**
 * The bare side, the cheapest fan-out of these frames: every millisecond, the frames of the lines
 * that fell due (as the agent writes them) are made once — the frame JSON stamped then, and the
 * WebSocket header — and written to each client's TCP socket in one write. No validation, no
 * log, no flow control. After `warmUp` unmeasured frames, as Planbridge's side gets its first turn.
 */
export const bareBroadcast = async (
  clients: number,
  count: number,
  rate: number,
  warmUp = 0
): Promise<DeliveryFigures> => {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })
  const sockets: Array<Socket> = []
  const http = createServer()
  http.on("upgrade", (request, socket, head) =>
    wss.handleUpgrade(request, socket, head, () => sockets.push(socket as Socket))
  )
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const port = (http.address() as { port: number }).port
  const hot = await startHotClients({ url: `ws://127.0.0.1:${port}`, clients })
  /** Writes frames `from`..`to` at `rate` as they fall due; resolves with when the first was due. */
  const stream = async (from: number, to: number): Promise<number> => {
    const started = performance.now()
    for (let next = from; next < to;) {
      const due = Math.min(to, from + Math.floor(((performance.now() - started) * rate) / 1000) + 1)
      if (due > next) {
        const parts: Array<Buffer> = []
        const writtenAtMs = performance.timeOrigin + performance.now()
        for (; next < due; next++) {
          const payload = Buffer.from(bareFrame(next, writtenAtMs), "utf8")
          parts.push(textFrameHeader(payload.length), payload)
        }
        const bytes = Buffer.concat(parts)
        for (const socket of sockets) socket.write(bytes)
      }
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    return started
  }
  try {
    if (warmUp > 0) {
      await stream(0, warmUp)
      await hot.warmedUp(warmUp * clients)
    }
    const started = await stream(warmUp, warmUp + count)
    const report = await hot.settle(count * clients, 60_000)
    const streamEndAt = performance.timeOrigin + started + (count / rate) * 1000
    return figuresOf(report, { expected: count * clients, streamEndAt, rate, events: count, serverCpuMs: 0 })
  } finally {
    await hot.close()
    for (const socket of sockets) socket.destroy()
    wss.close()
    await new Promise<void>((resolve) => http.close(() => resolve()))
  }
}

export const benchHotThread = async (options: { readonly clients: number; readonly count: number }) => {
  try {
    const sides = []
    // "Maximum rate": every line due at once; the agent writes them as fast as its pipe takes them.
    for (const rate of [1_000, 1_000_000]) {
      // The sources as they are (a dist/ left by an older build would be measured otherwise).
      const env = { PLANBRIDGE_FROM_SOURCE: "1" }
      // After an unmeasured first turn, as the ingest part's warm-up run: the first stream of a
      // server also compiles its schemas and mappings and the JIT's code (from source, loads modules).
      const warmUp = 1_000
      const planbridge = await runHotThread({ clients: options.clients, count: options.count, rate, env, warmUp })
      // The same warm-up for the bare side: its first frames are its clients' first too (their code not yet compiled).
      const bare = await bareBroadcast(options.clients, options.count, rate, warmUp)
      sides.push({ rate, planbridge, bare })
      // CPU time is what a loaded machine does not distort much (a wall-clock delay it does).
      note(
        `hot thread at ${rate >= 1_000_000 ? "the maximum rate" : `${rate} lines/s`}: server CPU ` +
          `${((planbridge.serverCpuMs * 1_000) / planbridge.deliveries).toFixed(2)} µs per delivered frame, ` +
          `${(planbridge.serverCpuMs / planbridge.events).toFixed(3)} ms per event (${planbridge.serverCpuMs} ms in all; ` +
          `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores)`
      )
    }
    const bursts = [1, 2, 3, 8]
    const perEvent = []
    for (const burst of bursts) perEvent.push(await ingestCpuPerEvent(burst))
    note(
      `hot thread ingestion CPU per event, one thread's events ${bursts.join(", ")} to a transaction ` +
        `(a line a ms was 1; with the group-commit window 2–3): ` +
        `${perEvent.map((ms) => ms.toFixed(3)).join(", ")} ms (load average ${loadavg()[0]!.toFixed(1)})`
    )
    const bigLine = await runBigLine({ mib: 20, subscribers: 1, env: { PLANBRIDGE_FROM_SOURCE: "1" } })
    return { sides, bigLine }
  } finally {
    cleanup()
  }
}
