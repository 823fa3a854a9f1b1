import { ThreadState, type ItemView, type ThreadSnapshot } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startDemoProviders } from "../../src/demo/DemoProviders.ts"
import { HELP_TEXT } from "../../src/demo/scenarios.ts"
import type { RegisteredProvider } from "../../src/orchestration/ProviderRegistry.ts"
import { makeCodexAdapter } from "../../src/provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../../src/provider/codex/CodexMappingState.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockResponsesModel } from "../support/mockResponsesModel.ts"
import { STEP_MS } from "./demoRig.ts"
import { serverLife } from "./serverLife.ts"

/**
 * Issue 34 with the real `codex app-server` 0.171.0: a thread, a turn, the server stopped and
 * started again on its data dir, `thread.resume`, another turn. The second reply is an item of
 * its own, in what a client folds live and in the server's snapshot (`GET /api/threads/:id`):
 * with demo mode's models, whose ids stay unique across the restart; and with a scripted model
 * that gives both replies the same id on purpose, which Planbridge keeps apart by their turns.
 */

const dirs: Array<string> = []
const newDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `planbridge-resume-items-${label}-`))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** One life of the server, plus what a client holds of a thread. */
const life = async (dataDir: string, providers: ReadonlyArray<RegisteredProvider>) => {
  const base = await serverLife(dataDir, providers)
  const { client } = base
  /** What a client holds: the subscribe snapshot (none with `afterSeq: 0`) and every event after it, folded. */
  const live = (threadId: string): ThreadSnapshot => {
    const snapshot = client.frames.find((f) => f.type === "snapshot" && f.threadId === threadId)
    const state =
      snapshot?.type === "snapshot" ? ThreadState.fromSnapshot(snapshot.snapshot) : ThreadState.empty(threadId, "codex")
    for (const f of client.frames) if (f.type === "event" && f.threadId === threadId) state.apply(f.seq, f.event)
    return state.toSnapshot()
  }
  return { ...base, live }
}

/** The assistant replies of a snapshot, as [turn, id, text]. */
const replies = (snapshot: ThreadSnapshot): ReadonlyArray<readonly [string, string, string]> =>
  snapshot.items
    .filter((i: ItemView) => i.itemType === "assistant_message")
    .map((i) => [i.turnId, i.itemId, i.text] as const)

/**
 * A Codex thread with one turn, then the server restarted by `restart` (which returns the next
 * life), `thread.resume` and a second turn; returns the live fold and the stored snapshot.
 */
const turnRestartResumeTurn = async (
  first: Awaited<ReturnType<typeof life>>,
  restart: () => Promise<Awaited<ReturnType<typeof life>>>,
  texts: readonly [string, string]
) => {
  const cwd = newDir("cwd")
  const { threadId } = (await first.ok({ type: "session.start", provider: "codex", cwd, mode: "default" })) as {
    threadId: string
  }
  await first.ok({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 })
  await first.ok({ type: "turn.start", threadId: threadId as never, text: texts[0] })
  await first.waitEvent("turn.completed", threadId)
  const before = replies(first.live(threadId))
  expect(before).toHaveLength(1)
  await first.close()

  const second = await restart()
  try {
    await second.ok({ type: "thread.subscribe", threadId: threadId as never })
    expect(await second.ok({ type: "thread.resume", threadId: threadId as never })).toMatchObject({ resumed: true })
    const resumed = await second.waitEvent("session.started", threadId)
    await second.ok({ type: "turn.start", threadId: threadId as never, text: texts[1] })
    await second.waitEvent("turn.completed", threadId, resumed.seq)
    const live = second.live(threadId)
    const stored = await second.stored(threadId)
    // The first turn's reply is as it was before the restart.
    expect(replies(live)[0]).toEqual(before[0])
    expect(replies(stored)[0]).toEqual(before[0])
    return { live, stored }
  } finally {
    await second.close()
  }
}

describe("the reply after a resume is an item of its own (real Codex app-server)", { timeout: STEP_MS * 4 }, () => {
  it("demo mode: a restarted demo model gives the new reply a new id", async () => {
    assertLoopbackOnly()
    const dataDir = newDir("demo-data")
    let demo = await startDemoProviders()
    try {
      const first = await life(dataDir, demo.providers)
      const { live, stored } = await turnRestartResumeTurn(first, async () => {
        // The demo's models live and die with the server, as `planbridge serve --demo` runs them.
        await demo.close()
        demo = await startDemoProviders()
        return life(dataDir, demo.providers)
      }, ["Hello", "Hello again"])
      for (const snapshot of [live, stored]) {
        const [one, two] = replies(snapshot)
        expect(replies(snapshot)).toHaveLength(2)
        expect(one![0]).not.toBe(two![0])
        expect([one![2], two![2]]).toEqual([HELP_TEXT, HELP_TEXT])
        // Unique for the thread's whole life, as a real model service's ids are.
        expect(one![1]).not.toBe(two![1])
      }
      expect(live.items).toEqual(stored.items)
    } finally {
      await demo.close()
    }
  })

  it("a model that gives both replies the same id: two items, one per turn", async () => {
    assertLoopbackOnly()
    const dataDir = newDir("reuse-data")
    // The model service outlives the server restart, as a real one does.
    const model = await startMockResponsesModel()
    const providers: ReadonlyArray<RegisteredProvider> = [
      {
        adapter: makeCodexAdapter({
          model: "gpt-5.5",
          baseUrl: model.baseUrl,
          envKey: "PLANBRIDGE_TEST_KEY",
          apiKey: "planbridge-test-key",
          providerId: "planbridge-test"
        }),
        capabilities: codexCapabilities,
        label: "Codex (scripted)"
      }
    ]
    try {
      model.script(
        { output: [{ type: "text", text: "The first reply.", id: "msg_reused" }] },
        { output: [{ type: "text", text: "The second reply.", id: "msg_reused" }] }
      )
      const { live, stored } = await turnRestartResumeTurn(
        await life(dataDir, providers),
        () => life(dataDir, providers),
        ["First?", "Second?"]
      )
      for (const snapshot of [live, stored]) {
        expect(replies(snapshot).map(([, id, text]) => [id, text])).toEqual([
          ["msg_reused", "The first reply."],
          ["msg_reused", "The second reply."]
        ])
        const [one, two] = replies(snapshot)
        expect(one![0]).not.toBe(two![0])
      }
      expect(live.items).toEqual(stored.items)
      expect(model.pending()).toBe(0)
    } finally {
      await model.close()
    }
  })
})
