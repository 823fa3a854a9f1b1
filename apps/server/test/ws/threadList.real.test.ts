import type { ServerFrame, ThreadId, ThreadListEntry } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDemoRig, STEP_MS, type DemoRig } from "../demo/demoRig.ts"
import { connect, type TestClient } from "../support/wsClient.ts"

/**
 * `threads.subscribe` (issue 27, item 7): a connection follows the thread list and everything
 * waiting on a person in it, live. Another connection starts a session with the real Codex
 * app-server (demo mode, its model scripted on loopback); its thread appears in the follower's
 * list, its question appears there while it waits, and leaves once answered, with no refresh.
 */
let rig: DemoRig
let watcher: TestClient

beforeAll(async () => {
  rig = await startDemoRig()
  watcher = await connect({ url: rig.server.url, token: rig.server.token })
}, STEP_MS)
afterAll(async () => {
  await watcher?.close()
  await rig?.close()
})

type EntryFrame = ServerFrame & { type: "threadEntry" }
const entryOf =
  (threadId: string, check: (entry: ThreadListEntry) => boolean) =>
  (frame: ServerFrame): frame is EntryFrame =>
    frame.type === "threadEntry" && frame.entry.thread.threadId === threadId && check(frame.entry)

describe("threads.subscribe against the real server", () => {
  it(
    "a thread started elsewhere appears, its question shows while it waits and leaves once answered",
    async () => {
      const subscribed = await watcher.command({ type: "threads.subscribe" })
      expect(subscribed.type === "result" && subscribed.result).toEqual({ threads: [] })

      // Another connection (the rig's own client) starts a plan-mode session that asks.
      const { threadId } = await rig.session("codex", "plan")
      const appeared = await watcher.waitFor(
        entryOf(threadId, () => true),
        STEP_MS
      )
      expect(appeared.entry.thread).toMatchObject({ threadId, provider: "codex", mode: "plan" })

      await rig.ok({ type: "turn.start", threadId: threadId as ThreadId, text: "Ask me questions, then plan." })
      const asking = await watcher.waitFor(
        entryOf(threadId, (e) => e.prompts.length > 0),
        STEP_MS
      )
      const [prompt] = asking.entry.prompts
      expect(prompt?.status).toBe("pending")
      expect(prompt?.prompt.questions.map((q) => q.header)).toEqual(["Language", "Name"])

      // A connection that subscribes now gets it in the list itself.
      const late = await connect({ url: rig.server.url, token: rig.server.token })
      const list = await late.command({ type: "threads.subscribe" })
      if (list.type !== "result") throw new Error(`threads.subscribe failed: ${JSON.stringify(list)}`)
      const { threads } = list.result as { threads: ReadonlyArray<ThreadListEntry> }
      expect(threads.map((e) => [e.thread.threadId, e.thread.live, e.prompts.map((p) => p.promptId)])).toEqual([
        [threadId, true, [prompt!.promptId]]
      ])
      await late.close()

      await rig.ok({
        type: "userInput.respond",
        promptId: prompt!.promptId,
        answers: prompt!.prompt.questions.map((q) => ({ questionId: q.id, text: "fine" })),
        clientRequestId: "thread-list-answer"
      })
      const answered = await watcher.waitFor(
        entryOf(threadId, (e) => e.prompts.length === 0),
        STEP_MS
      )
      expect(answered.entry.requests).toEqual([])

      // Unsubscribed: nothing more arrives for the next turn.
      const stopped = await watcher.command({ type: "threads.unsubscribe" })
      expect(stopped.type === "result" && stopped.result).toEqual({ subscribed: false, wasSubscribed: true })
      await rig.waitFor("turn.completed", threadId)
      const count = watcher.frames.filter((f) => f.type === "threadEntry").length
      await rig.ok({ type: "turn.start", threadId: threadId as ThreadId, text: "Show me a checklist." })
      await rig.waitFor("turn.completed", threadId)
      await watcher.command({ type: "threads.list" }) // a round trip: anything sent before it has arrived
      expect(watcher.frames.filter((f) => f.type === "threadEntry").length).toBe(count)
    },
    STEP_MS * 3
  )
})
