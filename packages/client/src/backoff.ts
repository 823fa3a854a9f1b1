/** Reconnect delays: exponential from `initialMs` up to `maxMs`, with full jitter. */
export interface BackoffOptions {
  readonly initialMs: number
  readonly maxMs: number
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 30_000 }

/**
 * The delay before reconnect attempt `attempt` (0 = the first): a random value between 0 and
 * `min(maxMs, initialMs · 2^attempt)`, so that many clients dropped at once (a server restart)
 * do not all come back in the same instant.
 */
export const backoffDelay = (attempt: number, options: BackoffOptions, random: () => number = Math.random): number =>
  Math.floor(random() * Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt, 30)))
