import type { ThreadId } from "@planbridge/contracts"
import { Effect, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { makeThreadFeed, type FeedReads } from "../../src/ws/ThreadFeed.ts"

/**
 * A follower that lags behind a thread of big events (a big line's ~200 KB pieces) catches up
 * from the log a socket's room at a time: it reads about what it sends, not a page of 16 of
 * which it sends 5 and drops the rest at every drain (each of ten such followers read three
 * times the turn, issue 31 item 5's memory peak).
 */
const threadId = "thr-big" as ThreadId
const EVENTS = 100
const ROOM = 1024 * 1024
const eventJson = (seq: number) => JSON.stringify({ type: "content.delta", seq, delta: "z".repeat(200_000) })

describe("a lagging follower's backlog pages", () => {
  it("read about what the socket has room for, every event once and in order", async () => {
    const reads: Array<number> = []
    let charsRead = 0
    const store: FeedReads = {
      events: {
        readThreadJson: (_thread, after, limit) =>
          Effect.sync(() => {
            reads.push(limit)
            const page = []
            for (let seq = after + 1; seq <= Math.min(EVENTS, after + limit); seq++)
              page.push({ threadSeq: seq, eventJson: eventJson(seq) })
            for (const stored of page) charsRead += stored.eventJson.length
            return page
          }),
        threadHead: () => Effect.succeed(EVENTS)
      },
      threads: { snapshotJson: () => Effect.die("no snapshot in this test") }
    }
    let buffered = 0
    let charsSent = 0
    const sent: Array<number> = []
    const feed = Effect.runSync(
      Scope.provide(Scope.makeUnsafe())(
        makeThreadFeed({
          reads: store,
          send: () => {},
          sendText: (text) => {
            buffered += text.length
            charsSent += text.length
            sent.push((JSON.parse(text) as { seq: number }).seq)
          },
          sendFrames: () => {},
          congested: () => buffered >= ROOM,
          room: () => Math.max(0, ROOM - buffered),
          onLagging: () => {},
          end: () => {},
          hub: { listen: () => () => {} }
        })
      )
    )
    expect(await Effect.runPromise(feed.subscribe(threadId, 0))).toBe(true)
    // The socket drains and the connection resumes the feed, until every event was sent.
    for (let drains = 0; sent.length < EVENTS && drains < 200; drains++) {
      buffered = 0
      feed.resume()
      for (let i = 0; i < 50 && buffered < ROOM && sent.length < EVENTS; i++) await new Promise((r) => setTimeout(r, 1))
    }
    expect(sent).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1))
    // 1 MiB of room holds five of these events and the sixth crosses it: pages of about 7.
    expect(Math.max(...reads.slice(1))).toBeLessThanOrEqual(8)
    expect(charsRead).toBeLessThan(1.5 * charsSent)
  })
})
