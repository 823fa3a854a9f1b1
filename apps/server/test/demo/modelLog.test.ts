import { describe, expect, it } from "vitest"
import { startMockResponsesModel } from "../../src/demo/mockResponsesModel.ts"

/** A long-running demo model keeps a bounded log; ids and counts stay global. */
describe("the scripted model's request log", () => {
  it("keeps only the newest maxLogged requests, while response ids keep counting", async () => {
    const model = await startMockResponsesModel({ maxLogged: 2, unscripted: () => ({ output: [] }) })
    try {
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${model.baseUrl}/responses`, { method: "POST", body: JSON.stringify({ input: [] }) })
        ids.push(/"id":"(resp_mock_\d+)"/.exec(await res.text())?.[1] ?? "")
      }
      expect(ids).toEqual(["resp_mock_0", "resp_mock_1", "resp_mock_2"])
      expect(model.requests.map((r) => r.index)).toEqual([1, 2])
      expect(model.responseRequests()).toHaveLength(2)
      expect(await model.waitForResponseRequests(3)).toHaveLength(2)
    } finally {
      await model.close()
    }
  })
})
