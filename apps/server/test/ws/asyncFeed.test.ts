import type { ThreadId } from "@planbridge/contracts"
import { Effect, Scope } from "effect"
import { describe, expect, it } from "vitest"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import { liveRunsOf } from "../../src/ws/EventFrames.ts"
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
  const commit = (publish = true) => commitRun(1, publish)
  let framesMade = 0
  /** Commits the next `count` events together: their publication is one run. */
  const commitRun = (count: number, publish = true) => {
    const run: Array<StoredEvent> = []
    for (let i = 0; i < count; i++) {
      const stored = { seq: log.length + 1, threadSeq: log.length + 1, event: events[log.length]! }
      log.push(stored)
      run.push(stored)
    }
    if (!publish) return
    const live = liveRunsOf(run)[0]!
    // Counted: a run's frames are made only for what some follower writes.
    const counted = { ...live, frame: (i: number) => (framesMade++, live.frame(i)) }
    for (const listener of listeners) listener(counted)
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
  return { reads, commit, commitRun, hub, whileReading, framesMade: () => framesMade }
}

/** Builds in a scope of its own that the test leaves open (the connection's, in the server). */
const makeIn = <A>(effect: Effect.Effect<A, never, Scope.Scope>): A =>
  Effect.runSync(Scope.provide(Scope.makeUnsafe())(effect))

const feedOn = (store: ReturnType<typeof asyncStore>, room: () => number = () => Number.POSITIVE_INFINITY) => {
  const sent: Array<number> = []
  const feed = makeIn(
    makeThreadFeed({
      reads: store.reads,
      send: () => {},
      sendText: (text) => sent.push((JSON.parse(text) as { seq: number }).seq),
      sendFrames: (frames) =>
        sent.push(...textFramesIn(Buffer.concat(frames)).map((text) => (JSON.parse(text) as { seq: number }).seq)),
      congested: () => room() <= 0,
      room,
      onLagging: () => {},
      // A failed step would end the connection: here every read succeeds.
      end: () => {},
      hub: store.hub
    })
  )
  return { feed, sent }
}

/** The payloads of the unmasked text frames in `bytes` (RFC 6455 5.2), which hold whole frames only. */
const textFramesIn = (bytes: Buffer): Array<string> => {
  const texts: Array<string> = []
  for (let at = 0; at < bytes.length;) {
    expect(bytes[at]).toBe(0x81)
    const short = bytes[at + 1]!
    const [length, header] =
      short < 126
        ? [short, 2]
        : short === 126
          ? [bytes.readUInt16BE(at + 2), 4]
          : [Number(bytes.readBigUInt64BE(at + 2)), 10]
    texts.push(bytes.toString("utf8", at + header, at + header + length))
    at += header + length
  }
  return texts
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

  it("a run is written only as far as the socket has room (and the frame that crosses it); the rest comes from the log", async () => {
    const store = asyncStore()
    store.commit()
    let room = Number.POSITIVE_INFINITY
    const { feed, sent } = feedOn(store, () => room)
    expect(await Effect.runPromise(feed.subscribe(threadId, 0))).toBe(true)
    // Room for less than a frame: the run's first frame crosses the bound, the rest waits in the log.
    room = 1
    store.commitRun(5)
    expect(sent).toEqual([1, 2])
    expect(feed.lagging()).toBe(true)
    // Only the frame written was made (a run of a hundred 1 MiB events costs one frame here).
    expect(store.framesMade()).toBe(1)
    // Lagging: the next run is skipped (it is in the log) until the socket has drained.
    store.commitRun(2)
    expect(sent).toEqual([1, 2])
    room = Number.POSITIVE_INFINITY
    feed.resume()
    await until(() => sent.length === 8)
    expect(sent).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(feed.lagging()).toBe(false)
  })
})
