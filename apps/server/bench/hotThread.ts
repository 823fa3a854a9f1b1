import { WebSocketServer, type WebSocket } from "ws"
import { cleanup } from "../test/chaos/rig.ts"
import { floodChunk } from "../test/provider/acp/flood.ts"
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
 * `createdAt`) against a bare `ws` server sending frames of the same shape and size to the same
 * 200 clients at the same pace, measured in the same run; and the server's peak memory for one
 * 20 MiB line.
 *
 * Read the delays with the "last delivery … after the stream's end" next to them: `createdAt` is
 * stamped when a line is taken up (by the session; by the bare loop when it sends), so a side
 * that falls behind the agent stamps late and looks quick. The bare loop, one write per frame
 * and client, fell 26-37 s behind a 5 s stream on 2 loaded cores.
 */
const raw = (i: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    method: "session/update",
    params: {
      sessionId: "scripted-session",
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: floodChunk(i) } }
    }
  })
/** A frame like Planbridge's for the agent's chunk i: the event, its `raw` line, stamped now. */
const bareFrame = (i: number) =>
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
      payload: { streamKind: "assistant_text", delta: floodChunk(i) },
      raw: { source: "acp", direction: "in", method: "session/update", payload: JSON.parse(raw(i)) as unknown }
    }
  })

/** The bare side: frame i sent to every client when it falls due (`rate` a second), as the agent writes its lines. */
const bareBroadcast = async (clients: number, count: number, rate: number): Promise<DeliveryFigures> => {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false })
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()))
  const sockets: Array<WebSocket> = []
  wss.on("connection", (socket) => sockets.push(socket))
  const port = (wss.address() as { port: number }).port
  const hot = await startHotClients({ url: `ws://127.0.0.1:${port}`, clients })
  try {
    const started = performance.now()
    for (let next = 0; next < count;) {
      const due = Math.min(count, Math.floor(((performance.now() - started) * rate) / 1000) + 1)
      for (; next < due; next++) {
        const frame = bareFrame(next)
        for (const socket of sockets) socket.send(frame)
      }
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    const report = await hot.settle(count * clients, 60_000)
    const streamEndAt = performance.timeOrigin + started + (count / rate) * 1000
    return figuresOf(report, { expected: count * clients, streamEndAt, rate, events: count, serverCpuMs: 0 })
  } finally {
    await hot.close()
    await new Promise<void>((resolve) => wss.close(() => resolve()))
  }
}

export const benchHotThread = async (options: { readonly clients: number; readonly count: number }) => {
  try {
    const sides = []
    // "Maximum rate": every line due at once; the agent writes them as fast as its pipe takes them.
    for (const rate of [1_000, 1_000_000]) {
      // The sources as they are (a dist/ left by an older build would be measured otherwise).
      const env = { PLANBRIDGE_FROM_SOURCE: "1" }
      const planbridge = await runHotThread({ clients: options.clients, count: options.count, rate, env })
      const bare = await bareBroadcast(options.clients, options.count, rate)
      sides.push({ rate, planbridge, bare })
    }
    const bigLine = await runBigLine({ mib: 20, subscribers: 1, env: { PLANBRIDGE_FROM_SOURCE: "1" } })
    return { sides, bigLine }
  } finally {
    cleanup()
  }
}
