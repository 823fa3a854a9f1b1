// A stand-in for `codex app-server` that speaks just enough of its JSON-RPC to host a session,
// and writes lines that are not JSON-RPC at chosen moments. Used only where the real binary
// cannot be made to misbehave (a malformed stdout line).
import { createInterface } from "node:readline"

const send = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`)
const garbage = (text) => process.stdout.write(`${text}\n`)
const threadId = "fake-thread"
let turns = 0
let pending

const finishTurn = (turn, text) => {
  const turnId = turn.id
  const item = { type: "agentMessage", id: `${turnId}-msg`, text }
  send({ method: "item/started", params: { threadId, turnId, item: { ...item, text: "" }, startedAtMs: 1 } })
  send({ method: "item/agentMessage/delta", params: { threadId, turnId, itemId: item.id, delta: text } })
  send({ method: "item/completed", params: { threadId, turnId, item, completedAtMs: 2 } })
  send({
    method: "turn/completed",
    params: { threadId, turn: { ...turn, status: "completed", startedAt: 1, completedAt: 2, durationMs: 1000 } }
  })
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line)
  switch (msg.method) {
    case "initialize":
      return send({ id: msg.id, result: { userAgent: "fake-app-server/0.0.0" } })
    case "thread/start":
      send({
        id: msg.id,
        result: {
          thread: { id: threadId, cwd: msg.params.cwd, cliVersion: "0.0.0-fake", status: { type: "idle" } },
          model: "fake-model"
        }
      })
      garbage("this is not JSON {")
      return garbage('{"hello":"valid JSON, but not JSON-RPC"}')
    case "turn/start": {
      const turnId = `fake-turn-${++turns}`
      const turn = {
        id: turnId,
        status: "inProgress",
        error: null,
        startedAt: null,
        completedAt: null,
        durationMs: null
      }
      send({ id: msg.id, result: { turn } })
      send({ method: "turn/started", params: { threadId, turn: { ...turn, startedAt: 1 } } })
      if (msg.params.input[0].text.includes("[[SECRET]]")) {
        // A question the real model cannot ask (its tool has no secret flag); the answer is echoed back.
        pending = { turn, id: `ask-${turns}` }
        return send({
          id: pending.id,
          method: "item/tool/requestUserInput",
          params: {
            threadId,
            turnId,
            itemId: `call-${turns}`,
            questions: [
              {
                id: "token",
                header: "Token",
                question: "Paste the deploy token",
                isOther: true,
                isSecret: true,
                options: null
              }
            ],
            isBlocking: true,
            autoResolutionMs: null
          }
        })
      }
      if (msg.params.input[0].text.includes("[[HUGE]]")) {
        // A question on one line over the client's 32 MiB bound; the turn then waits for its answer.
        const text = "x".repeat(33 * 1024 * 1024)
        const question = { id: "q", header: "Huge", question: text, isOther: true, isSecret: false, options: null }
        const itemId = `call-${turns}`
        const params = { threadId, turnId, itemId, questions: [question], isBlocking: true, autoResolutionMs: null }
        return send({ id: `huge-${turns}`, method: "item/tool/requestUserInput", params })
      }
      garbage("\u0000\u0001 binary noise mid-turn")
      return finishTurn(turn, "still here")
    }
    default:
      if (pending !== undefined && msg.id === pending.id && msg.method === undefined) {
        const { turn } = pending
        pending = undefined
        send({ method: "serverRequest/resolved", params: { threadId, requestId: msg.id } })
        return finishTurn(turn, `received ${JSON.stringify(msg.result)}`)
      }
      return undefined
  }
})
