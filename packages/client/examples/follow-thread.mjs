// Follow a thread: a store that holds its state (turns, items, checklist, prompts) and updates
// live. Starts a session, sends a message and prints the checklist and the agent's text as
// they change, until the turn ends.
//   PLANBRIDGE_TOKEN=… node follow-thread.mjs [provider] [message]
import { PlanbridgeClient } from "@planbridge/client"

const WebSocket = globalThis.WebSocket ?? (await import("ws")).default
const client = await PlanbridgeClient.connect({
  url: process.env.PLANBRIDGE_URL ?? "http://127.0.0.1:4317",
  token: process.env.PLANBRIDGE_TOKEN ?? "",
  WebSocket
})
const provider = process.argv[2] ?? client.providers.find((p) => p.ready !== false)?.provider
const { threadId } = await client.startSession(provider, process.env.PLANBRIDGE_CWD ?? process.cwd(), "default")

// Follow before sending: the store then holds every event of the turn.
const store = await client.follow(threadId)
const { turnId } = await client.startTurn(threadId, process.argv[3] ?? "Show me a checklist.")

let lastChecklist = ""
await new Promise((resolve) => {
  const check = () => {
    const thread = store.getSnapshot() // the same object until something changed
    if (thread === undefined) return
    const checklist = (thread.latestPlan?.plan.steps ?? []).map((s) => `[${s.status}] ${s.step}`).join(", ")
    if (checklist !== "" && checklist !== lastChecklist) console.log(`checklist: ${(lastChecklist = checklist)}`)
    const turn = thread.turns.find((t) => t.turnId === turnId)
    if (turn !== undefined && turn.status !== "inProgress") {
      for (const item of thread.items.filter((i) => i.turnId === turnId && i.itemType === "assistant_message"))
        console.log(`agent: ${item.text}`)
      console.log(`turn ${turn.status}`)
      stop()
      resolve()
    }
  }
  const stop = store.subscribe(check)
  check()
})
client.close()
