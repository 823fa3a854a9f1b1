// Benchmark clients, in their own thread so that their parsing does not queue behind the server
// on one event loop. Each client follows one thread; latency = receive time − the absolute
// send time carried in the event's delta text ({"t": <ms since the epoch, high resolution>}); a
// delta marked `warmup` is counted as received but not measured.
// Latencies go into a fixed histogram (10 µs buckets up to 10 s), not a growing array, so that a
// long soak measures the server's memory, not the clients'.
import { parentPort, workerData } from "node:worker_threads"
import WebSocket from "ws"

const { url, token, threads, total, planbridge } = workerData
const now = () => performance.timeOrigin + performance.now()
const BUCKET_MS = 0.01
const histogram = new Uint32Array(1_000_000)
let received = 0

const open = (threadId) =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(planbridge ? url : `${url}?thread=${threadId}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {}
    })
    socket.once("error", reject)
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data))
      if (frame.type === "result") resolve(socket)
      if (frame.type === "event" && frame.event.type === "content.delta") {
        const { t, warmup } = JSON.parse(frame.event.payload.delta)
        const latency = now() - t
        if (!warmup) histogram[Math.min(histogram.length - 1, Math.max(0, Math.floor(latency / BUCKET_MS)))]++
        if (++received === total) parentPort.postMessage({ type: "done", histogram, bucketMs: BUCKET_MS })
      }
    })
    socket.once("open", () => {
      if (!planbridge) return resolve(socket)
      socket.send(JSON.stringify({ type: "hello", protocolVersion: 1 }))
      socket.send(JSON.stringify({ type: "command", id: "s", command: { type: "thread.subscribe", threadId } }))
    })
  })

const sockets = await Promise.all(threads.map(open))
parentPort.postMessage({ type: "ready" })
parentPort.on("message", (message) => {
  if (message === "close") {
    for (const s of sockets) s.terminate()
    parentPort.close()
  }
})
