import { describe, expect, it } from "vitest"
import { startMockMessagesModel } from "../../src/demo/mockMessagesModel.ts"
import { startMockResponsesModel } from "../../src/demo/mockResponsesModel.ts"

const RESPONSE_ID = /"id":"resp_mock_([0-9a-f]{12})_(\d+)"/

/** A long-running demo model keeps a bounded log; ids and counts stay global. */
describe("the scripted model's request log", () => {
  it("keeps only the newest maxLogged requests, while response ids keep counting", async () => {
    const model = await startMockResponsesModel({ maxLogged: 2, unscripted: () => ({ output: [] }) })
    try {
      const ids: Array<RegExpExecArray | null> = []
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${model.baseUrl}/responses`, { method: "POST", body: JSON.stringify({ input: [] }) })
        ids.push(RESPONSE_ID.exec(await res.text()))
      }
      expect(ids.map((id) => id?.[2])).toEqual(["0", "1", "2"])
      expect(new Set(ids.map((id) => id?.[1])).size).toBe(1)
      expect(model.requests.map((r) => r.index)).toEqual([1, 2])
      expect(model.responseRequests()).toHaveLength(2)
      expect(await model.waitForResponseRequests(3)).toHaveLength(2)
    } finally {
      await model.close()
    }
  })
})

/** The ids of every output item a Responses stream carries (`"id":"…"` of messages and calls). */
const itemIds = (stream: string): ReadonlyArray<string> => [
  ...new Set([...stream.matchAll(/"(?:id|call_id)":"((?:msg|fc|call)_mock_[^"]+)"/g)].map((m) => m[1]!))
]

/**
 * Issue 34: a thread outlives the model server (the demo starts its models with the server), so
 * a restarted model must not give the items of a resumed thread the ids of its earlier turns.
 */
describe("the scripted models' ids across restarts", () => {
  it("a restarted Responses model gives the same request's items new ids", async () => {
    const streams: Array<string> = []
    for (let start = 0; start < 2; start++) {
      const model = await startMockResponsesModel()
      try {
        model.script({
          output: [
            { type: "text", text: "Hello." },
            { type: "function_call", name: "shell", arguments: { command: ["true"] } }
          ]
        })
        const res = await fetch(`${model.baseUrl}/responses`, { method: "POST", body: JSON.stringify({ input: [] }) })
        streams.push(await res.text())
      } finally {
        await model.close()
      }
    }
    const [first, second] = streams.map(itemIds)
    expect(first).toHaveLength(3)
    expect(second).toHaveLength(3)
    expect(first!.filter((id) => second!.includes(id))).toEqual([])
  })

  it("a restarted Messages model's message and tool-use ids are new", async () => {
    const ids: Array<string> = []
    for (let start = 0; start < 2; start++) {
      const model = await startMockMessagesModel()
      try {
        model.script({ blocks: [{ type: "tool_use", name: "Bash", input: { command: "true" } }] })
        const body = { model: "m", tools: [{ name: "Bash" }], messages: [{ role: "user", content: "hi" }] }
        const res = await fetch(`${model.baseUrl}/v1/messages`, { method: "POST", body: JSON.stringify(body) })
        const message = (await res.json()) as { id: string; content: ReadonlyArray<{ id?: string }> }
        ids.push(message.id, message.content[0]!.id!)
      } finally {
        await model.close()
      }
    }
    expect(new Set(ids).size).toBe(4)
  })
})
