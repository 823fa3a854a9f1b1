import { RuntimeEvent, THREAD_TITLE_CHARS, type ThreadId } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { ProjectionRebuild } from "../../src/persistence/ProjectionRebuild.ts"
import { ThreadReads } from "../../src/persistence/ThreadReads.ts"
import { ENGINES, freshStore } from "../support/storeEngines.ts"

/**
 * Thread summaries on both engines (issue 27): a thread's title is its first message (bounded),
 * and archiving (`thread.archive`) is kept across a reopen and a projection rebuild, which
 * replays the log into the projections and so would lose it if it were one of them.
 */
const A = "thr-archive-a" as ThreadId
const B = "thr-archive-b" as ThreadId
const at = (s: number) => `2026-12-01T10:00:${String(s).padStart(2, "0")}.000Z`
const envelope = (threadId: ThreadId, n: number) => ({
  eventId: `${threadId}-${n}`,
  provider: "codex",
  threadId,
  createdAt: at(n)
})
const FIRST = `Plan the migration of the billing service. ${"Keep every invoice. ".repeat(20)}`

const events = Schema.decodeUnknownSync(Schema.Array(RuntimeEvent))([
  { ...envelope(A, 1), type: "session.started", payload: { cwd: "/home/dev/billing", resumed: false } },
  { ...envelope(A, 2), type: "turn.started", turnId: "t1", payload: {} },
  {
    ...envelope(A, 3),
    type: "item.completed",
    turnId: "t1",
    itemId: "u1",
    payload: { itemType: "user_message", status: "completed", text: FIRST }
  },
  {
    ...envelope(A, 4),
    type: "item.completed",
    turnId: "t1",
    itemId: "u2",
    payload: { itemType: "user_message", status: "completed", text: "A later message" }
  },
  { ...envelope(B, 5), type: "session.started", payload: { resumed: false } }
])

const live = () => false

describe.each(ENGINES)("thread summaries and archive on %s", (engine) => {
  it("title and times in the list; archive kept across a reopen and a rebuild; unarchive; unknown thread", async () => {
    const store = await freshStore(engine)
    await store.run(
      Effect.gen(function* () {
        yield* (yield* RuntimeIngestion).ingestAll(events)
        const reads = yield* ThreadReads
        const list = yield* reads.list(live)
        const a = list.find((t) => t.threadId === A)
        const b = list.find((t) => t.threadId === B)
        expect(a).toMatchObject({ cwd: "/home/dev/billing", createdAt: at(1), updatedAt: at(4) })
        expect(a?.title).toBe(FIRST.slice(0, THREAD_TITLE_CHARS))
        expect(a?.archivedAt).toBeUndefined()
        // No message yet: no title.
        expect(b).not.toHaveProperty("title")
        expect(b).toMatchObject({ createdAt: at(5) })

        expect(yield* reads.setArchived(A, "2026-12-02T08:00:00.000Z")).toEqual({
          archivedAt: "2026-12-02T08:00:00.000Z"
        })
        // Archiving again keeps the first time.
        expect(yield* reads.setArchived(A, "2026-12-03T08:00:00.000Z")).toEqual({
          archivedAt: "2026-12-02T08:00:00.000Z"
        })
        expect(yield* reads.setArchived("thr-none" as ThreadId, "2026-12-02T08:00:00.000Z")).toBeUndefined()
        expect(yield* reads.summary("thr-none" as ThreadId, live)).toBeUndefined()
      })
    )
    // Reopened, then every projection replayed from the log: the archive is still there.
    await store.run(
      Effect.gen(function* () {
        const reads = yield* ThreadReads
        expect((yield* reads.summary(A, live))?.archivedAt).toBe("2026-12-02T08:00:00.000Z")
        const report = yield* (yield* ProjectionRebuild).rebuild({ dryRun: false })
        expect(report.events).toBe(events.length)
        const summary = yield* reads.summary(A, live)
        expect(summary).toMatchObject({
          archivedAt: "2026-12-02T08:00:00.000Z",
          title: FIRST.slice(0, THREAD_TITLE_CHARS)
        })
        expect((yield* reads.list(live)).filter((t) => t.archivedAt !== undefined).map((t) => t.threadId)).toEqual([A])

        expect(yield* reads.setArchived(A, undefined)).toEqual({ archivedAt: null })
        expect(yield* reads.summary(A, live)).not.toHaveProperty("archivedAt")
        // Unarchiving what is not archived changes nothing.
        expect(yield* reads.setArchived(B, undefined)).toEqual({ archivedAt: null })
      })
    )
    expect(await store.query("select count(*) as n from archived_threads")).toEqual([{ n: 0 }])
  })
})
