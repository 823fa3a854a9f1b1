import type { QuestionId } from "@planbridge/contracts"
import { mkdtempSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { startDemoProviders, type DemoProviders } from "../../../apps/server/src/demo/DemoProviders.ts"
import { functionCallOutputs } from "../../../apps/server/src/demo/mockResponsesModel.ts"
import type { RunningServer } from "../../../apps/server/src/http/HttpServer.ts"
import { PlanbridgeClient, type WebSocketConstructor } from "../src/index.ts"
import { start, tempDirs, until } from "./support/realServer.ts"

/**
 * An answer whose connection drops right after it was sent, before its result came back: the
 * client reconnects and sends it again under the same `clientRequestId`; the server applies it
 * once and answers the retry with the first outcome. The provider is the real `codex app-server`
 * of demo mode, so "once" is checked where it matters: what the model was told.
 */
const dirs = tempDirs()
let demo: DemoProviders
let server: RunningServer

beforeAll(async () => {
  demo = await startDemoProviders()
  server = await start(dirs.make("retry"), { providers: demo.providers })
})
afterAll(async () => {
  await server?.close()
  await demo?.close()
  dirs.removeAll()
})

/** `ws`, except that the first frame carrying `marker` is followed, once written, by a dead connection (1006). */
const droppingAfter = (marker: string, dropped: { count: number }): WebSocketConstructor =>
  class extends WebSocket {
    override send(data: string): void {
      if (dropped.count === 0 && data.includes(marker)) {
        dropped.count++
        super.send(data, () => this.terminate())
        return
      }
      super.send(data)
    }
  } as unknown as WebSocketConstructor

describe("an answer retried across a reconnect", () => {
  it("is applied once: the same result, one resolution, one answer reaching the model", async () => {
    const dropped = { count: 0 }
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: droppingAfter('"userInput.respond"', dropped),
      backoff: { initialMs: 10, maxMs: 100 }
    })
    try {
      expect(client.providers.find((p) => p.provider === "codex")).toMatchObject({ demo: true })
      const { threadId } = await client.startSession("codex", mkdtempSync(join(dirs.make("cwd"), "w-")), "plan")
      const store = await client.follow(threadId)
      const resolutions: Array<string> = []
      client.onEvent((id, event) => {
        if (id === threadId && event.type === "user-input.resolved") resolutions.push(event.payload.resolution)
      })
      await client.startTurn(threadId, "Ask me questions.")
      await until(client.inbox.subscribe, () => client.inbox.getSnapshot().some((e) => e.kind === "prompt"), 90_000)
      const entry = client.inbox.getSnapshot().find((e) => e.kind === "prompt")
      if (entry?.kind !== "prompt") throw new Error("unreachable")
      const answers = entry.prompt.prompt.questions.map((q) => ({
        questionId: q.id as QuestionId,
        selectedOptionIds: [q.options[0]!.id]
      }))

      const statuses: Array<string> = []
      client.onStatus((s) => statuses.push(s))
      const result = await client.respond(entry.prompt.promptId, answers, "retry-across-reconnect")
      expect(dropped.count).toBe(1)
      expect(statuses).toContain("reconnecting")
      // Asked again explicitly, the server still gives the first outcome and does nothing.
      expect(await client.respond(entry.prompt.promptId, answers, "retry-across-reconnect")).toEqual(result)

      await until(store.subscribe, () => store.getSnapshot()?.turns.at(-1)?.status === "completed", 90_000)
      expect(resolutions).toEqual(["answered"])
      const answered = demo.models.codex.requests.filter((r) => functionCallOutputs(r).length > 0)
      expect(answered).toHaveLength(1)
      expect(functionCallOutputs(answered[0]!)).toHaveLength(1)
      expect(client.inbox.getSnapshot().filter((e) => e.kind === "prompt")).toEqual([])
    } finally {
      client.close()
    }
  }, 200_000)
})
