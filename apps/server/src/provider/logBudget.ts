import { Clock, Effect } from "effect"

/**
 * Log lines a provider can cause by misbehaving (one per bad line it writes) are rate-limited:
 * an agent that writes 20,000 bad lines must not write 20,000 lines into the server's log. The
 * events stay exact (one `runtime.warning` per line, in the event log); the log only summarises.
 */

/** At most this many such lines per window, per session... */
export const PROVIDER_LOG_LINES = 10
/** ... per minute. The next line let through says how many were left out. */
export const PROVIDER_LOG_WINDOW_MS = 60_000

/**
 * A budget of `perWindow` log lines per `windowMs` (by the Clock service): `log(line)` runs
 * `line(dropped)` while the window has room, `dropped` being how many were left out since the
 * last line let through, and otherwise only counts. Constant memory, however many are dropped.
 */
export const makeLogBudget = (perWindow: number = PROVIDER_LOG_LINES, windowMs: number = PROVIDER_LOG_WINDOW_MS) => {
  let windowStart = Number.NEGATIVE_INFINITY
  let used = 0
  let dropped = 0
  return (line: (dropped: number) => Effect.Effect<void>): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (now - windowStart >= windowMs) {
        windowStart = now
        used = 0
      }
      if (used >= perWindow) {
        dropped += 1
        return Effect.void
      }
      used += 1
      const before = dropped
      dropped = 0
      return line(before)
    })
}
