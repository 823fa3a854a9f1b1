import type { ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import { makeThreadFeed, type FeedReads } from "../../src/ws/ThreadFeed.ts"
import type { ThreadListener } from "../../src/ws/ThreadHub.ts"
import { generateEventMix } from "../support/eventMix.ts"

/**
 * The feed on a store whose reads complete later (as PostgreSQL's would), not synchronously as
 * SQLite's do: events committed while a subscription or a catch-up reads the log are neither
 * lost nor sent twice nor out of order.
 */
const threadId = "thr-async" as ThreadId
const events = generateEventMix({ seed: 7, count: 60, threads: 1 }).map((e) => ({ ...e, threadId }))

const asyncStore = () => {
  const log: Array<StoredEvent> = []
  const listeners = new Set<ThreadListener>()
  let duringNextRead: (() => void) | undefined
  /** A read sees the log as it is when it starts, and answers a little later. */
  const later = <A>(f: () => A) =>
    Effect.suspend(() => {
      const answer = f()
      const during = duringNextRead
      duringNextRead = undefined
      return Effect.delay(Effect.sync(() => during?.()).pipe(Effect.as(answer)), "3 millis")
    })
  const reads: FeedReads = {
    events: {
      readThreadJson: (_thread, after, limit) =>
        later(() =>
          log
            .filter((s) => s.threadSeq > after)
            .slice(0, limit)
            .map((s) => ({ threadSeq: s.threadSeq, eventJson: JSON.stringify(s.event) }))
        ),
      threadHead: () => later(() => log.length)
    },
    threads: { snapshotJson: () => Effect.die("no snapshot in this test") }
  }
  /** Commits the next event; `publish: false` loses its publication (only the log has it). */
  const commit = (publish = true) => {
    const stored = { seq: log.length + 1, threadSeq: log.length + 1, event: events[log.length]! }
    log.push(stored)
    if (publish) for (const listener of listeners) listener(stored)
  }
  const hub = {
    listen: (_thread: string, listener: ThreadListener) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    stop: async () => {}
  }
  /** Runs `f` while the next read is in flight: after it has seen the log, before it answers. */
  const whileReading = (f: () => void) => {
    duringNextRead = f
  }
  return { reads, commit, hub, whileReading }
}

const feedOn = (store: ReturnType<typeof asyncStore>) => {
  const sent: Array<number> = []
  const feed = makeThreadFeed({
    reads: store.reads,
    send: () => {},
    sendText: (text) => sent.push((JSON.parse(text) as { seq: number }).seq),
    congested: () => false,
    onLagging: () => {},
    onFailure: (cause) => {
      throw new Error(String(cause))
    },
    hub: store.hub
  })
  return { feed, sent }
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 2))
  expect(done()).toBe(true)
}

describe("the WebSocket feed on a store with asynchronous reads", () => {
  it("delivers what commits during the backlog read once, in order, after the backlog", async () => {
    const store = asyncStore()
    for (let i = 0; i < 20; i++) store.commit()
    const { feed, sent } = feedOn(store)
    // The subscription reads the head, then the backlog: these commit after the backlog read saw the log.
    store.whileReading(() => store.whileReading(() => Array.from({ length: 10 }, () => store.commit())))
    expect(await Effect.runPromise(feed.subscribe(threadId, 5))).toBe(true)
    await until(() => sent.length === 25)
    expect(sent).toEqual(Array.from({ length: 25 }, (_, i) => i + 6))
  })

  it("fills a gap from the log, also while another catch-up is still reading", async () => {
    const store = asyncStore()
    for (let i = 0; i < 3; i++) store.commit()
    const { feed, sent } = feedOn(store)
    expect(await Effect.runPromise(feed.subscribe(threadId, 0))).toBe(true)
    store.commit(false)
    store.commit()
    store.commit(false)
    store.commit()
    store.commit()
    await until(() => sent.length === 8)
    expect(sent).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
  })

  it("an unsubscribe waits for the subscription in progress, and nothing is sent after it", async () => {
    const store = asyncStore()
    for (let i = 0; i < 4; i++) store.commit()
    const { feed, sent } = feedOn(store)
    const subscribed = Effect.runPromise(feed.subscribe(threadId, 0))
    const unsubscribed = Effect.runPromise(feed.unsubscribe(threadId))
    expect(await subscribed).toBe(true)
    expect(await unsubscribed).toBe(true)
    store.commit()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(sent).toEqual([1, 2, 3, 4])
    expect(feed.subscriptions()).toBe(0)
  })
})
