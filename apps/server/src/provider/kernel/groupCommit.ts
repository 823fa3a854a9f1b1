import { Effect } from "effect"

/**
 * Group commit for a hot session (issue 31, item 5). A session's reader takes every line
 * waiting at once and records them in one transaction (`SessionRunner.applyAll`). An agent
 * that streams at a steady 1,000 lines/s, though, writes one line a millisecond, and a
 * transaction takes less than that: every line was its own transaction (0.57 ms of the server's
 * CPU per line, 0.86 ms with its fan-out: the loop ~85 % busy, so every pause queued the
 * stream). So while the session is hot — its last take found a line waiting or had one within
 * `HOT_GAP_MS`, and that burst was small — the reader waits `GROUP_COMMIT_WINDOW_MS` before it
 * takes the next burst, and the lines that arrive meanwhile share one transaction.
 *
 * What it costs: a line of a hot session waits at most the window (plus the timer's lateness)
 * before it is mapped; no more than the fan-out's own interval (`FAN_OUT_INTERVAL_MS`, ws/ThreadHub.ts)
 * already holds an event. A session that is not streaming (its next line came later than
 * `HOT_GAP_MS`) is never held. Nothing else changes: the lines keep their places in the bounded
 * read-ahead (`INBOUND_QUEUE_LINES`) while they wait, so backpressure on the provider is as
 * before, and a burst's events are still durable before anyone is told and before any reply.
 */
export const GROUP_COMMIT_WINDOW_MS = 2

/** A take that had a line within this long found the session streaming (hot). */
const HOT_GAP_MS = 2

/** A burst of at least this many lines already shares its transaction well: no window after it. */
const GROUP_COMMIT_LINES = 32

/** The clock's time in ms, below a millisecond (the session's clock: a test's TestClock). */
const nowMs = Effect.clockWith((clock) => Effect.sync(() => Number(clock.currentTimeNanosUnsafe()) / 1e6))

/**
 * `take` (the next burst, waiting for at least one line) preceded by the window while the
 * session is hot. One per reader: it remembers how the previous take went.
 */
export const groupCommitTake = <A>(take: Effect.Effect<ReadonlyArray<A>>): Effect.Effect<ReadonlyArray<A>> => {
  let hot = false
  return Effect.gen(function* () {
    if (hot) yield* Effect.sleep(GROUP_COMMIT_WINDOW_MS)
    const asked = yield* nowMs
    const taken = yield* take
    hot = taken.length < GROUP_COMMIT_LINES && (yield* nowMs) - asked < HOT_GAP_MS
    return taken
  })
}
