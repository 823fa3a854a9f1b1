// Connect to a running `planbridge serve` and list what it offers.
//   PLANBRIDGE_TOKEN=$(npx planbridge token) node connect.mjs
// PLANBRIDGE_URL defaults to http://127.0.0.1:4317.
import { PlanbridgeClient } from "@planbridge/client"

// Browsers and Node >= 22 have a global WebSocket; Node 20 needs the `ws` package.
const WebSocket = globalThis.WebSocket ?? (await import("ws")).default

const client = await PlanbridgeClient.connect({
  url: process.env.PLANBRIDGE_URL ?? "http://127.0.0.1:4317",
  token: process.env.PLANBRIDGE_TOKEN ?? "",
  WebSocket,
  clientName: "connect example"
})
for (const p of client.providers) {
  console.log(
    `${p.provider}: ${p.label ?? p.provider} ready=${p.ready ?? "unknown"} plan mode=${p.capabilities.supportsPlanMode}`
  )
}
const threads = await client.listThreads()
console.log(`threads: ${threads.length}`)
client.close()
