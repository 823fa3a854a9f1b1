import {
  decodeRuntimeEventSync,
  ThreadState,
  TURN_WINDOW,
  type RuntimeEvent,
  type ThreadId
} from "@planbridge/contracts"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { ProjectionRebuild } from "../../src/persistence/ProjectionRebuild.ts"
import { ThreadReads } from "../../src/persistence/ThreadReads.ts"
import { step } from "../../src/provider/codex/CodexMapping.ts"
import { messageLine } from "../../src/provider/codex/CodexLine.ts"
import { initialMappingState } from "../../src/provider/codex/CodexMappingState.ts"
import { stampDraft } from "../../src/provider/kernel/EventDraft.ts"
import { ENGINES, freshStore } from "../support/storeEngines.ts"

/**
 * Issue 34: a provider that gives a later turn's item an id an earlier turn already used (the
 * demo's scripted model did, after a restart; Codex passes the model's ids on as they come) must
 * not change anything of the earlier turn. The native Codex notifications go through the real
 * mapping and into the store of each engine; the earlier turn's item is compared before and after,
 * in the snapshot, its JSON and a client's fold of the stored events.
 */

const THREAD = "thr-reused-ids" as ThreadId
const NATIVE = "native-thread"
const REUSED = "msg_reused"

const turnStarted = (turnId: string) => ({
  method: "turn/started",
  params: {
    threadId: NATIVE,
    turn: { id: turnId, status: "inProgress", error: null, startedAt: null, completedAt: null, durationMs: null }
  }
})
const turnCompleted = (turnId: string) => ({
  method: "turn/completed",
  params: {
    threadId: NATIVE,
    turn: { id: turnId, status: "completed", error: null, startedAt: null, completedAt: null, durationMs: 5 }
  }
})
const agentMessage = (method: "item/started" | "item/completed", turnId: string, text: string) => ({
  method,
  params: { threadId: NATIVE, turnId, item: { type: "agentMessage", id: REUSED, text } }
})
const delta = (turnId: string, text: string) => ({
  method: "item/agentMessage/delta",
  params: { threadId: NATIVE, turnId, itemId: REUSED, delta: text }
})

/** Codex's messages → canonical events, through the pure mapping the adapter runs. */
const mapper = () => {
  let state = initialMappingState(THREAD, "default")
  let n = 0
  let second = 0
  return (messages: ReadonlyArray<unknown>): ReadonlyArray<RuntimeEvent> =>
    messages.flatMap((msg) => {
      const result = step(state, messageLine("in", msg))
      state = result.state
      return result.drafts.map((draft) =>
        decodeRuntimeEventSync(
          stampDraft(draft, {
            provider: "codex",
            threadId: THREAD,
            eventId: `reused-${n++}`,
            // A second apart: the later turn's item starts after the earlier one's.
            createdAt: new Date(Date.UTC(2026, 5, 1, 9, 0, second++)).toISOString()
          })
        )
      )
    })
}

const sessionStarted: RuntimeEvent = decodeRuntimeEventSync({
  eventId: "reused-start",
  provider: "codex",
  threadId: THREAD,
  createdAt: "2026-06-01T08:59:59.000Z",
  type: "session.started",
  payload: { cwd: "/work", resumed: false, nativeThreadId: NATIVE }
})

describe.each(ENGINES)("an item id used again in a later turn, on %s", (engine) => {
  it("is a new item of the later turn: nothing of the earlier turn's item changes", async () => {
    const store = await freshStore(engine)
    const map = mapper()
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const reads = yield* ThreadReads
        const snapshot = () => Effect.map(reads.snapshot(THREAD), (s) => s!)
        const itemsOf = (turnId: string) => Effect.map(snapshot(), (s) => s.items.filter((i) => i.turnId === turnId))

        yield* ingestion.ingestAll([sessionStarted])
        yield* ingestion.ingestAll(
          map([
            turnStarted("turn-1"),
            agentMessage("item/started", "turn-1", ""),
            delta("turn-1", "First "),
            delta("turn-1", "reply.")
          ])
        )
        // The first turn's item completes in a batch of its own, after its text streamed in chunks.
        yield* ingestion.ingestAll(
          map([agentMessage("item/completed", "turn-1", "First reply."), turnCompleted("turn-1")])
        )
        const first = yield* itemsOf("turn-1")
        expect(first).toMatchObject([{ itemId: REUSED, status: "completed", text: "First reply." }])

        // The later turn streams an item of the same id: while it streams, and once it completed.
        yield* ingestion.ingestAll(
          map([turnStarted("turn-2"), agentMessage("item/started", "turn-2", ""), delta("turn-2", "Second")])
        )
        expect(yield* itemsOf("turn-1")).toEqual(first)
        expect(yield* itemsOf("turn-2")).toMatchObject([{ itemId: REUSED, status: "inProgress", text: "Second" }])
        yield* ingestion.ingestAll(map([delta("turn-2", " reply.")]))
        expect(yield* itemsOf("turn-1")).toEqual(first)
        expect(yield* itemsOf("turn-2")).toMatchObject([{ itemId: REUSED, text: "Second reply." }])
        yield* ingestion.ingestAll(
          map([agentMessage("item/completed", "turn-2", "Second reply, whole."), turnCompleted("turn-2")])
        )

        const server = yield* snapshot()
        expect(server.items.filter((i) => i.itemType === "assistant_message").map((i) => [i.turnId, i.text])).toEqual([
          ["turn-1", "First reply."],
          ["turn-2", "Second reply, whole."]
        ])
        expect(server.items.filter((i) => i.turnId === "turn-1")).toEqual(first)
        // The feed's snapshot JSON (stored row JSON and chunks) says the same.
        const json = yield* reads.snapshotJson(THREAD, TURN_WINDOW.max)
        expect(JSON.parse(json!.json)).toEqual(server)
        // A client folding the stored events keeps the two apart as well.
        const client = ThreadState.empty(THREAD, "codex")
        for (const { threadSeq, event } of yield* (yield* EventStore).readThread(THREAD, 0, 1_000))
          client.apply(threadSeq, event)
        expect(client.toSnapshot()).toEqual(server)
        // And replaying the log gives exactly these projections.
        const rebuilt = yield* (yield* ProjectionRebuild).rebuild({ dryRun: true })
        expect(rebuilt.differences).toEqual([])
      })
    )
  })
})
