// Decide a plan the agent proposes in plan mode: wait for the proposed plan, print it, approve it.
// (`decision: "rejected"` with `feedback`, or `"edited"` with `editedMarkdown`, where the
// provider's capabilities allow it.)
//   PLANBRIDGE_TOKEN=… node decide-plan.mjs [provider]
// (In demo mode, a plan-mode message with "plan" makes the agent propose one.)
import { PlanbridgeClient } from "@planbridge/client"

const WebSocket = globalThis.WebSocket ?? (await import("ws")).default
const client = await PlanbridgeClient.connect({
  url: process.env.PLANBRIDGE_URL ?? "http://127.0.0.1:4317",
  token: process.env.PLANBRIDGE_TOKEN ?? "",
  WebSocket
})
// A provider whose plans wait for a decision (`supportsExitPlanMode`); in others a plan ends the turn.
const provider =
  process.argv[2] ?? client.providers.find((p) => p.ready !== false && p.capabilities.supportsExitPlanMode)?.provider
const { threadId } = await client.startSession(provider, process.env.PLANBRIDGE_CWD ?? process.cwd(), "plan")
const store = await client.follow(threadId)
await client.startTurn(threadId, "Propose a plan.")

/** Resolves with the first value `pick` returns for the thread, re-checked on each change. */
const when = (pick) =>
  new Promise((resolve) => {
    const check = () => {
      const found = pick(store.getSnapshot())
      if (found === undefined) return
      stop()
      resolve(found)
    }
    const stop = store.subscribe(check)
    check()
  })

// A plan is decided once it is complete (`markdown` set); while streaming only `streamedText` grows.
const plan = await when((thread) => thread?.proposedPlans.find((p) => p.markdown !== null && p.decision === null))
console.log(`thread ${threadId} proposed:\n${plan.markdown}`)
await client.decidePlan({ threadId, planId: plan.planId, decision: "approved" })
const decided = await when((thread) =>
  thread?.proposedPlans.find((p) => p.planId === plan.planId && p.decision !== null)
)
console.log(`plan ${decided.decision}`)
client.close()
