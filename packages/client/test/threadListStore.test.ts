import type { ThreadId, ThreadListEntry } from "@planbridge/contracts"
import { describe, expect, it } from "vitest"
import { ThreadList } from "../src/index.ts"

/**
 * The store under `followThreadList`: a `threadEntry` may overtake the `threads.subscribe` result
 * (the server sends entries read after the list; PROTOCOL.md), so an entry that arrived while
 * the subscribe was on its way wins over the result's entry for its thread.
 */
const entry = (threadId: string, seq: number, updatedAt: string): ThreadListEntry => ({
  thread: {
    threadId: threadId as ThreadId,
    provider: "codex",
    state: "idle",
    mode: "default",
    seq,
    live: true,
    updatedAt,
    createdAt: updatedAt
  },
  prompts: [],
  requests: []
})

describe("ThreadList", () => {
  it("keeps an entry that overtook the subscribe's result, and orders by the latest change", () => {
    const list = new ThreadList()
    let changes = 0
    list.subscribe(() => changes++)
    list.subscribing()
    list.put(entry("a", 9, "2026-12-06T10:00:09.000Z"))
    list.replaceAll([entry("a", 5, "2026-12-06T10:00:05.000Z"), entry("b", 7, "2026-12-06T10:00:07.000Z")])
    expect(list.getSnapshot().map((e) => [e.thread.threadId, e.thread.seq])).toEqual([
      ["a", 9],
      ["b", 7]
    ])
    expect(list.getSnapshot()).toBe(list.getSnapshot())
    // After the result, entries replace what is there; a later result (a resubscribe) replaces it all.
    list.put(entry("b", 12, "2026-12-06T10:00:12.000Z"))
    expect(list.getSnapshot().map((e) => e.thread.threadId)).toEqual(["b", "a"])
    list.subscribing()
    list.replaceAll([entry("c", 1, "2026-12-06T10:00:13.000Z")])
    expect(list.getSnapshot().map((e) => e.thread.threadId)).toEqual(["c"])
    expect(changes).toBe(4)
  })
})
