// Which carried rows a PostgreSQL replica may publish as they are (PgEventStore.ts): only a
// thread's whole run from what it published up to the announced end. A hole is a commit this
// process made itself between two it heard (it does not hear its own announcements); publishing
// around it would mark the thread past it, and its own append's publish would then skip it: the
// event lost for this replica's subscribers, which the first CI of the carried rows showed
// (`pgConcurrentAppends.test.ts` timed out waiting for it).
import { describe, expect, it } from "vitest"
import type { CarriedRow } from "../../src/persistence/postgres/PgCommitListener.ts"
import { carriedRuns } from "../../src/persistence/postgres/PgEventStore.ts"

const row = (threadId: string, threadSeq: number, seq: number): CarriedRow => ({
  seq,
  threadId,
  threadSeq,
  schemaVersion: 1,
  event: "{}",
  raw: null
})

describe("carried rows published as they are", () => {
  it("a whole run after what was published is used, other threads' rows and older rows left out", () => {
    const carried = [row("a", 9, 100), row("a", 10, 101), row("b", 1, 102), row("a", 11, 103), row("c", 4, 104)]
    const wanted = new Map([
      ["a", [9, 11] as const],
      ["b", [0, 1] as const]
    ])
    expect(carriedRuns(carried, wanted)?.map((r) => [r.threadId, r.threadSeq])).toEqual([
      ["a", 10],
      ["b", 1],
      ["a", 11]
    ])
  })

  it("a hole in a thread's run (this process's own commit between two heard) means read back", () => {
    // Published up to 9; heard 10 and 12 in one step; 11 was this process's own, not yet published.
    const carried = [row("a", 10, 100), row("a", 12, 102)]
    expect(carriedRuns(carried, new Map([["a", [9, 12] as const]]))).toBeUndefined()
  })

  it("a run that starts after the next unpublished row, or stops short of the end, means read back", () => {
    expect(carriedRuns([row("a", 11, 101), row("a", 12, 102)], new Map([["a", [9, 12] as const]]))).toBeUndefined()
    expect(carriedRuns([row("a", 10, 100)], new Map([["a", [9, 11] as const]]))).toBeUndefined()
    expect(carriedRuns([row("b", 1, 100)], new Map([["a", [0, 1] as const]]))).toBeUndefined()
  })
})
