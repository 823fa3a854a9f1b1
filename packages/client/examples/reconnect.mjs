// What a client does when the connection drops (a restart of the server, a network change): it
// reconnects by itself, with backoff, and each followed thread catches up from where its store
// is (`afterSeq`), so nothing is missed and nothing applied twice. This follows a thread, prints
// each status change, and once it is back, sends a message on the same thread.
//   PLANBRIDGE_TOKEN=… node reconnect.mjs [provider]    (then restart the server)
import { PlanbridgeClient } from "@planbridge/client"

const WebSocket = globalThis.WebSocket ?? (await import("ws")).default
const client = await PlanbridgeClient.connect({
  url: process.env.PLANBRIDGE_URL ?? "http://127.0.0.1:4317",
  token: process.env.PLANBRIDGE_TOKEN ?? "",
  WebSocket,
  // The delays between attempts (these are the defaults' shape, shorter).
  backoff: { initialMs: 200, maxMs: 2_000 }
})
const provider = process.argv[2] ?? client.providers.find((p) => p.ready !== false)?.provider
const { threadId } = await client.startSession(provider, process.env.PLANBRIDGE_CWD ?? process.cwd(), "default")
const store = await client.follow(threadId)
// One turn first: a provider keeps a conversation to resume only once it had one.
const { turnId: first } = await client.startTurn(threadId, "Hello.")
await new Promise((resolve) => {
  const check = () => {
    const turn = store.getSnapshot()?.turns.find((t) => t.turnId === first)
    if (turn === undefined || turn.status === "inProgress") return
    stop()
    resolve()
  }
  const stop = store.subscribe(check)
  check()
})
console.log(`following thread ${threadId} at seq ${store.seq}`)

const back = new Promise((resolve) => {
  let dropped = false
  client.onStatus((status) => {
    console.log(`status: ${status}`) // connecting → open; reconnecting while it is down
    if (status === "reconnecting") dropped = true
    if (status === "open" && dropped) resolve()
  })
})
await back

// A restarted server's session is not live any more: resume it (a new provider session that
// continues the conversation), then the thread takes turns again.
const { resumed } = await client.resumeThread(threadId)
const { turnId } = await client.startTurn(threadId, "Hello again.")
console.log(`reconnected: resumed=${resumed}, turn ${turnId}, store at seq ${store.seq}`)
client.close()
