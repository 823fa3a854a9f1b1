// Answer a question an agent asks. The client's inbox holds every pending prompt of the
// threads it follows; this answers the first one with each question's first option (or a text
// for a free-form question), then waits until the server recorded the answer.
//   PLANBRIDGE_TOKEN=… node answer-prompt.mjs [provider]
// (In demo mode, a plan-mode message with "question" makes the agent ask.)
import { PlanbridgeClient } from "@planbridge/client"

const WebSocket = globalThis.WebSocket ?? (await import("ws")).default
const client = await PlanbridgeClient.connect({
  url: process.env.PLANBRIDGE_URL ?? "http://127.0.0.1:4317",
  token: process.env.PLANBRIDGE_TOKEN ?? "",
  WebSocket
})
const provider = process.argv[2] ?? client.providers.find((p) => p.ready !== false)?.provider
const { threadId } = await client.startSession(provider, process.env.PLANBRIDGE_CWD ?? process.cwd(), "plan")
const store = await client.follow(threadId)
await client.startTurn(threadId, "Ask me a question or two first.")

/** Resolves with the first value `pick` returns for what `source` holds, re-checked on each change. */
const when = (source, pick) =>
  new Promise((resolve) => {
    const check = () => {
      const found = pick(source.getSnapshot())
      if (found === undefined) return
      stop()
      resolve(found)
    }
    const stop = source.subscribe(check)
    check()
  })

const entry = await when(client.inbox, (entries) => entries.find((e) => e.kind === "prompt"))
const { prompt } = entry
console.log(`thread ${threadId} asked: ${prompt.prompt.questions.map((q) => q.label).join(" / ")}`)
const answers = prompt.prompt.questions.map((q) =>
  q.options.length > 0 ? { questionId: q.id, selectedOptionIds: [q.options[0].id] } : { questionId: q.id, text: "yes" }
)
// Safe to retry: one clientRequestId per answer, so the provider gets it once even across reconnects.
await client.respond(prompt.promptId, answers)
const resolved = await when(store, (thread) =>
  thread?.prompts.find((p) => p.promptId === prompt.promptId && p.status === "resolved")
)
console.log(`prompt ${resolved.resolution}: ${answers.length} answer(s)`)
client.close()
