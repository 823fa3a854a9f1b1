/**
 * The scripted Cursor agent's `SCENARIO:FLOOD count=N`: N small `agent_message_chunk` updates
 * written as fast as the agent can write them (issue 13, item 4: 200,000 chunks, 52 MB in 2.6 s).
 * Shared by the agent and the tests that check the text arrives whole and in order.
 */

/** Each chunk is 64 characters: its index (six digits), a space, filler, a newline. */
const FILLER = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRST"

export const floodChunk = (i: number): string => `${String(i).padStart(6, "0")} ${FILLER}\n`

/** The whole text of a flood of `count` chunks, as the item must end up. */
export const floodText = (count: number): string => Array.from({ length: count }, (_, i) => floodChunk(i)).join("")

/** The prompt that starts a flood. */
export const floodPrompt = (count: number): string => `SCENARIO:FLOOD count=${count}`

export const floodCount = (prompt: string): number => Number(/count=(\d+)/.exec(prompt)?.[1] ?? "200000")

/** The prompt of a steady stream: `count` chunks at `rate` lines per second (`SCENARIO:PACED`). */
export const pacedPrompt = (count: number, rate: number): string => `SCENARIO:PACED count=${count} rate=${rate}`

/**
 * A paced chunk: its index, the moment it was written (microseconds since the epoch, as
 * `performance.timeOrigin + performance.now()` gives it), filler; as long as a flood chunk. A
 * client measures each delivery from that moment: from when the line existed, whoever was late.
 */
export const pacedChunk = (i: number, writtenAtMs: number): string =>
  `${String(i).padStart(6, "0")} ${String(Math.round(writtenAtMs * 1000)).padStart(16, "0")} ${FILLER.slice(17)}\n`

export const pacedRate = (prompt: string): number => Number(/rate=(\d+)/.exec(prompt)?.[1] ?? "1000")

/**
 * When set, the agent writes `{"count","wroteAtMs"}` to this file once its last chunk is
 * written (the write returned): a test compares that moment with what the server had committed.
 */
export const FLOOD_REPORT_ENV = "SCRIPTED_CURSOR_FLOOD_REPORT"

export interface FloodReport {
  readonly count: number
  /** `Date.now()` in the agent right after its last chunk was written to its stdout. */
  readonly wroteAtMs: number
}
