// The clients of one hot thread (issue 31, item 5), in a worker thread of their own so that their
// reading does not queue behind the server on one event loop (as a separate client process's
// would not). Each client follows the same thread; for every event frame it checks that `seq` is
// the one after the last it saw (in order, none missing) and measures the delivery delay: its
// receive time − the moment the line was written at its source (the agent, or the bare
// broadcaster), which the chunk's text carries after its number (flood.ts, `pacedChunk`). Not
// `createdAt`: the server stamps it when it takes the line up, so a server that falls behind the
// agent would stamp late and look quick. Frames are not JSON-parsed: `seq` and the chunk's
// number are found in the frame's bytes, so that 200 clients at thousands of frames a second cost the
// machine as little as possible besides the server being measured. Delays go into a fixed
// histogram (0.1 ms buckets up to 60 s), not a growing array.
//
// workerData: { url, token?, threadId?, clients }. With a token: Planbridge (hello, subscribe to
// threadId); without: a bare broadcast server that sends to every client it accepts.
// Messages in: "report" (answered with the figures so far), "reset" (every figure back to zero,
// each client's order check going on: what follows a warm-up is measured afresh; answered with
// { type: "reset" }), "close". Out: "ready" once every client is connected (and subscribed),
// { type: "report", … }.
import { parentPort, workerData } from "node:worker_threads"
import WebSocket from "ws"

const { url, token, threadId, clients } = workerData
const BUCKET_MS = 0.1
const histogram = new Uint32Array(600_000)
let deliveries = 0
let outOfOrder = 0
let maxMs = 0
let lastReceivedAt = 0
const now = () => performance.timeOrigin + performance.now()
const SEQ = Buffer.from('"seq":')
const DELTA = Buffer.from('"delta":"')
const EVENT = Buffer.from('{"type":"event"')
const digitsAt = (data, at) => {
  let n = 0
  for (let i = at; i < data.length && data[i] >= 0x30 && data[i] <= 0x39; i++) n = n * 10 + data[i] - 0x30
  return n
}

const open = () =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(url, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      // The server's frames are its own JSON: checking their UTF-8 would only cost the clients.
      skipUTF8Validation: true
    })
    let last = undefined
    socket.once("error", reject)
    socket.on("message", (data) => {
      const receivedAt = now()
      if (data.compare(EVENT, 0, EVENT.length, 0, EVENT.length) !== 0) {
        const head = data.toString("utf8", 0, Math.min(data.length, 512))
        if (head.startsWith('{"type":"result"')) resolve(socket)
        else if (head.startsWith('{"type":"error"')) reject(new Error(`subscribe failed: ${head}`))
        return
      }
      const seq = digitsAt(data, data.indexOf(SEQ) + SEQ.length)
      if (last !== undefined && seq !== last + 1) outOfOrder++
      last = seq
      deliveries++
      // Only the stream's chunks have a due time (turn and item events around them do not).
      const at = data.indexOf(DELTA)
      if (at < 0) return
      // "<index:6> <written at, µs since the epoch:16> …": from when the line was written.
      const writtenAtMs = digitsAt(data, at + DELTA.length + 7) / 1000
      const delay = Math.max(0, receivedAt - writtenAtMs)
      histogram[Math.min(histogram.length - 1, Math.floor(delay / BUCKET_MS))]++
      if (delay > maxMs) maxMs = delay
      lastReceivedAt = receivedAt
    })
    socket.once("open", () => {
      if (token === undefined) return resolve(socket)
      socket.send(JSON.stringify({ type: "hello", protocolVersion: 1 }))
      socket.send(JSON.stringify({ type: "command", id: "s", command: { type: "thread.subscribe", threadId } }))
    })
  })

const sockets = []
// A few at a time: 200 upgrades at once queue behind each other anyway.
for (let i = 0; i < clients; i += 20)
  sockets.push(...(await Promise.all(Array.from({ length: Math.min(20, clients - i) }, open))))
parentPort.postMessage({ type: "ready" })
parentPort.on("message", (message) => {
  if (message === "report") {
    parentPort.postMessage({
      type: "report",
      histogram: histogram.slice(),
      bucketMs: BUCKET_MS,
      deliveries,
      outOfOrder,
      maxMs,
      lastReceivedAt
    })
  } else if (message === "reset") {
    histogram.fill(0)
    deliveries = 0
    outOfOrder = 0
    maxMs = 0
    lastReceivedAt = 0
    parentPort.postMessage({ type: "reset" })
  } else if (message === "close") {
    for (const s of sockets) s.terminate()
    parentPort.close()
  }
})
