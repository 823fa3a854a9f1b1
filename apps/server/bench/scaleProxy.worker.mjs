// A userspace TCP delay proxy: the simulated network between the replicas and PostgreSQL in the
// scale bench. This kernel has no `sch_netem` (`tc qdisc … netem` → unknown qdisc), so each byte
// is held here `delayMs` in each direction before it is passed on, in order (a queue per direction
// drained by one timer). In a worker thread of its own: its timers do not queue behind the bench.
import { createConnection, createServer } from "node:net"
import { parentPort, workerData } from "node:worker_threads"

const { targetPort, delayMs } = workerData

/** Passes `from`'s bytes to `to`, each chunk `delayMs` after it arrived. */
const delayed = (from, to) => {
  const queue = []
  let timer
  const flush = () => {
    timer = undefined
    const now = performance.now()
    while (queue.length > 0 && queue[0].due <= now) to.write(queue.shift().chunk)
    if (queue.length > 0) timer = setTimeout(flush, queue[0].due - now)
  }
  from.on("data", (chunk) => {
    queue.push({ due: performance.now() + delayMs, chunk })
    timer ??= setTimeout(flush, delayMs)
  })
  from.on("end", () => {
    const ending = () => (queue.length > 0 ? setTimeout(ending, delayMs) : to.end())
    ending()
  })
}

const server = createServer((client) => {
  client.setNoDelay(true)
  const upstream = createConnection({ host: "127.0.0.1", port: targetPort })
  upstream.setNoDelay(true)
  delayed(client, upstream)
  delayed(upstream, client)
  client.on("error", () => upstream.destroy())
  upstream.on("error", () => client.destroy())
  client.on("close", () => upstream.destroy())
  upstream.on("close", () => client.destroy())
})
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ type: "listening", port: server.address().port }))
parentPort.on("message", (message) => {
  if (message === "close") server.close(() => parentPort.close())
})
