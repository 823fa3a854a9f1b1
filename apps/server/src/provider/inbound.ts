import type { Readable } from "node:stream"
import { makeLineSplitter, MAX_LINE_BYTES, type LineSplitter, type ProviderLine } from "./lines.ts"

/**
 * Backpressure from a session to its provider (issue 13, item 4). A transport hands each line
 * of the provider's stdout to its session, which records the line's events (each `emit` waits
 * until they are durable) before it takes the next. Without a bound, a provider that writes
 * faster than ingestion keeps (and its lines wait in memory) as long as it likes: an agent that
 * wrote 200,000 chunks in 2.6 s left 722 MB behind in the server. So a transport reads only
 * while its queue of lines not yet taken up by the session has room; when it is full, it stops
 * reading the provider's stdout, the pipe fills, and the provider's writes block until the
 * session catches up. The session takes up a line by calling its `release`.
 */

/**
 * At most this many lines are read ahead of the session: read from the provider's stdout and
 * not yet taken up. A flood of small deltas then costs a few hundred lines of memory, and the
 * depth still leaves room to read ahead of ingestion's commits.
 */
export const INBOUND_QUEUE_LINES = 256

/**
 * ... and at most this many bytes of them (a full queue of long lines would otherwise be up to
 * 256 × 32 MiB). One line is always let in when the queue is empty, so the bytes read ahead are
 * at most this plus one line (`MAX_LINE_BYTES`).
 */
export const INBOUND_QUEUE_BYTES = 8 * 1024 * 1024

/** Reading resumes once the queue is down to half of either bound (not at every freed line). */
const RESUME_FRACTION = 0.5

/** What a test can observe of a transport's queue (counters only, cheap to keep). */
export interface FlowProbe {
  /** The most lines that were ever waiting at once (read, not yet released). */
  highWaterLines: number
  /** The most bytes of lines that were ever waiting at once. */
  highWaterBytes: number
  /** How many times reading stopped because the queue was full. */
  pauses: number
  /** Lines handed on in all. */
  lines: number
}

export const makeFlowProbe = (): FlowProbe => ({ highWaterLines: 0, highWaterBytes: 0, pauses: 0, lines: 0 })

export interface PacedReaderOptions {
  readonly stream: Readable
  /** Default: `makeLineSplitter()` (the 32 MiB line bound, a 4 KiB head of a longer line). */
  readonly splitter?: LineSplitter
  readonly maxLineBytes?: number
  readonly maxLines?: number
  readonly maxBytes?: number
  readonly probe?: FlowProbe
  /**
   * A line over `maxLineBytes` (its head and the bytes read): called the moment it is found, so
   * the provider can be stopped at once. Nothing after it is read; the line itself still comes
   * to `onLine` at its place, after the lines before it.
   */
  readonly onTooLong: (line: ProviderLine) => void
  /**
   * Each line, in stream order, with the function that frees its place in the queue (call it
   * when the session takes the line up; calling it again does nothing).
   */
  readonly onLine: (line: ProviderLine, release: () => void) => void
  /** After the last line was handed on: the stream ended, or failed with `error`. Called once. */
  readonly onEnd: (error?: Error) => void
}

export interface PacedReader {
  /** Lines handed on and not yet released. */
  readonly queued: () => number
  /** Lines read but held back because the queue is full (at most what one read of the stream brought). */
  readonly held: () => number
}

type Held = { readonly kind: "line"; readonly line: ProviderLine } | { readonly kind: "end"; readonly error?: Error }

/**
 * Reads `stream` line by line into a bounded queue (see `INBOUND_QUEUE_LINES`): lines are
 * handed on while the queue has room; when it is full, the stream is paused and the rest of
 * what was read stays here (never more than one read of the stream) until the session releases
 * lines. The end comes after every line, whatever was held back.
 */
export const readLinesPaced = (options: PacedReaderOptions): PacedReader => {
  const { stream, probe } = options
  const splitter = options.splitter ?? makeLineSplitter()
  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES
  const maxLines = options.maxLines ?? INBOUND_QUEUE_LINES
  const maxBytes = options.maxBytes ?? INBOUND_QUEUE_BYTES
  const held: Array<Held> = []
  let lines = 0
  let bytes = 0
  let paused = false
  /** A line over the bound was found: the rest of the stream is drained and ignored. */
  let abandoned = false
  let endSeen = false
  let delivering = false
  let again = false

  const full = () => lines >= maxLines || bytes >= maxBytes
  const roomy = () => lines <= maxLines * RESUME_FRACTION && bytes <= maxBytes * RESUME_FRACTION

  const admit = (line: ProviderLine) => {
    const size = line.data.length
    lines += 1
    bytes += size
    if (probe !== undefined) {
      probe.lines += 1
      probe.highWaterLines = Math.max(probe.highWaterLines, lines)
      probe.highWaterBytes = Math.max(probe.highWaterBytes, bytes)
    }
    let released = false
    options.onLine(line, () => {
      if (released) return
      released = true
      lines -= 1
      bytes -= size
      deliver()
    })
  }

  /** Hands on held lines while there is room, then pauses or resumes the stream. */
  const deliver = (): void => {
    // A release from inside `onLine` comes back here: let the outer loop go on instead.
    if (delivering) {
      again = true
      return
    }
    delivering = true
    try {
      do {
        again = false
        while (held.length > 0) {
          const next = held[0]!
          if (next.kind === "end") {
            held.length = 0
            options.onEnd(next.error)
            return
          }
          if (full()) break
          held.shift()
          admit(next.line)
        }
      } while (again)
    } finally {
      delivering = false
    }
    if (abandoned || endSeen) return resume()
    if (held.length > 0 || full()) pause()
    else if (roomy()) resume()
  }

  const pause = () => {
    if (paused) return
    paused = true
    if (probe !== undefined) probe.pauses += 1
    stream.pause()
  }
  const resume = () => {
    if (!paused) return
    paused = false
    stream.resume()
  }

  const hold = (line: ProviderLine) => {
    if (abandoned) return
    if (line.bytes > maxLineBytes) {
      abandoned = true
      options.onTooLong(line)
    }
    held.push({ kind: "line", line })
  }
  const end = (error?: Error) => {
    if (endSeen) return
    endSeen = true
    if (!abandoned && error === undefined) {
      const last = splitter.flush()
      if (last !== undefined) hold(last)
    }
    held.push(error === undefined ? { kind: "end" } : { kind: "end", error })
    deliver()
  }

  stream.on("data", (chunk: Buffer) => {
    if (abandoned || endSeen) return
    for (const line of splitter.push(chunk)) hold(line)
    // Over the bound before its end: not one more byte of it is buffered.
    const over = abandoned ? undefined : splitter.overflow()
    if (over !== undefined) hold(over)
    deliver()
  })
  stream.once("end", () => end())
  stream.once("error", (error: Error) => end(error))
  // A destroyed stream closes without `end`.
  stream.once("close", () => end())

  return { queued: () => lines, held: () => held.length }
}
