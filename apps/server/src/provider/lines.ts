/**
 * Reading a provider's stdout line by line, with one bound for every transport. Providers speak
 * newline-delimited JSON; a line is never buffered past the bound, so a runaway or hostile line
 * costs at most the bound in memory and is reported instead of read (EVENTS.md, "Limits").
 */

/**
 * The longest line any provider transport reads: 32 MiB, the ACP SDK's own message limit
 * (`DEFAULT_MAX_MESSAGE_BYTES`). A line over it cannot be read, so nothing in it can be answered
 * or acted on: each transport ends its session `crashed` with a `runtime.error` naming the bound.
 */
export const MAX_LINE_BYTES = 32 * 1024 * 1024

/** What a report keeps of a line over the bound: its head, enough to recognise it. */
export const LINE_HEAD_BYTES = 4096

/** One line without its line ending; `data` is only its head when `bytes` is over the bound. */
export interface ProviderLine {
  readonly data: Buffer
  readonly bytes: number
  /** The stream's last line, ended by the stream instead of a newline. */
  readonly unterminated?: true
}

export interface LineSplitter {
  /** The lines this chunk completes. */
  readonly push: (chunk: Buffer) => ReadonlyArray<ProviderLine>
  /** The unterminated last line at the end of the stream, if any. */
  readonly flush: () => ProviderLine | undefined
  /** The line being read, when it is already over the bound (its head and the bytes so far). */
  readonly overflow: () => ProviderLine | undefined
}

/**
 * Splits a byte stream at LF (a CR before it is dropped). A line longer than `maxLineBytes` is
 * not buffered past that: only its first `keepBytes` are kept, and its length counted.
 */
export const makeLineSplitter = (
  maxLineBytes: number = MAX_LINE_BYTES,
  keepBytes: number = LINE_HEAD_BYTES
): LineSplitter => {
  const keep = Math.min(maxLineBytes, keepBytes)
  let parts: Array<Buffer> = []
  let bytes = 0
  const append = (piece: Buffer) => {
    const overLimit = bytes > maxLineBytes
    bytes += piece.length
    if (overLimit) return
    parts.push(piece)
    // Only the head is copied: a view into the whole line would keep all of it alive.
    if (bytes > maxLineBytes) parts = [Buffer.concat(parts, keep)]
  }
  const take = (): ProviderLine => {
    let data = Buffer.concat(parts)
    let length = bytes
    if (length <= maxLineBytes && data[data.length - 1] === 0x0d) {
      data = data.subarray(0, -1)
      length -= 1
    }
    parts = []
    bytes = 0
    return { data, bytes: length }
  }
  return {
    push: (chunk) => {
      const lines: Array<ProviderLine> = []
      let start = 0
      for (let end = chunk.indexOf(0x0a, start); end !== -1; end = chunk.indexOf(0x0a, start)) {
        append(chunk.subarray(start, end))
        lines.push(take())
        start = end + 1
      }
      if (start < chunk.length) append(chunk.subarray(start))
      return lines
    },
    flush: () => (bytes > 0 ? { ...take(), unterminated: true } : undefined),
    overflow: () => (bytes > maxLineBytes ? { data: parts[0] ?? Buffer.alloc(0), bytes } : undefined)
  }
}

/** The longest prefix of `data` within `max` bytes that does not split a UTF-8 character. */
export const utf8Head = (data: Uint8Array, max: number): string => {
  let end = Math.min(data.length, max)
  if (end < data.length) while (end > 0 && ((data[end] ?? 0) & 0xc0) === 0x80) end -= 1
  return Buffer.from(data.buffer, data.byteOffset, end).toString("utf8")
}

/**
 * Why a session ended on a line over the bound. `bytes` is how much of the line was read before
 * it was abandoned: more than the bound, not necessarily the whole line.
 */
export const lineTooLongMessage = (who: string, bytes: number): string =>
  `${who} wrote a line over the line bound of ${MAX_LINE_BYTES} bytes (32 MiB; ${bytes} bytes read before it was ` +
  `abandoned); it cannot be read, so whatever it asked or answered is lost: the session was ended`
