// Start a session (a new thread) with a provider and send it a first message.
//   PLANBRIDGE_TOKEN=… node start-session.mjs [provider]
// Without a provider, the first one that is ready. The session works in PLANBRIDGE_CWD (default: here).
import { PlanbridgeClient } from "@planbridge/client"

const WebSocket = globalThis.WebSocket ?? (await import("ws")).default
const client = await PlanbridgeClient.connect({
  url: process.env.PLANBRIDGE_URL ?? "http://127.0.0.1:4317",
  token: process.env.PLANBRIDGE_TOKEN ?? "",
  WebSocket
})

const provider = process.argv[2] ?? client.providers.find((p) => p.ready !== false)?.provider
if (provider === undefined) throw new Error("the server offers no provider that is ready")
const cwd = process.env.PLANBRIDGE_CWD ?? process.cwd()

// mode: "default" (the provider asks before acting), "plan" or "acceptEdits", as its capabilities allow.
const { threadId } = await client.startSession(provider, cwd, "default")
const { turnId } = await client.startTurn(threadId, "Hello!")
console.log(`thread ${threadId} started with ${provider}; turn ${turnId} is running`)
client.close()
