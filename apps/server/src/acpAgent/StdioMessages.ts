import type { AnyMessage, Stream } from "@agentclientprotocol/sdk/unstable"
import type { Readable, Writable } from "node:stream"
import { idOfHead } from "./LineHead.ts"

/**
 * The longest line `planbridge acp` reads from its editor: 4 MiB. A prompt is sent to the server
 * as one frame of at most 256 KiB, so nothing useful is longer; the bound keeps a runaway editor
 * from making the agent buffer without limit.
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024

/** How much of an oversized line is kept to find its JSON-RPC `id` (it is near the start). */
const HEAD_BYTES = 64 * 1024

/** JSON-RPC's codes for what the reader refuses before the SDK sees it. */
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600

/**
 * ACP's newline-delimited JSON-RPC on the process's stdin/stdout, as the SDK's `Stream`. Unlike
 * the SDK's `ndJsonStream`, which ends the connection on a line over its limit, a line over
 * `maxLineBytes` is skipped up to its newline and answered with an `invalid request` error (with
 * its `id` when its first 64 KiB name one at the top level), and the connection goes on. Bad
 * JSON gets a parse error, a batch or a non-object an invalid request: each with `id: null`.
 */
export const stdioMessages = (input: Readable, output: Writable, maxLineBytes = MAX_LINE_BYTES): Stream => {
  const send = (message: AnyMessage | ErrorReply): void => void output.write(`${JSON.stringify(message)}\n`)
  const readable = new ReadableStream<AnyMessage>({
    start(controller) {
      let chunks: Array<Buffer> = []
      let length = 0
      /** Set while skipping the rest of an oversized line: its head, to find the id in. */
      let oversized: Buffer | undefined
      const refuseOversized = (head: Buffer) =>
        send(errorReply(idOfHead(head.toString("utf8")), INVALID_REQUEST, tooLong(maxLineBytes)))
      const line = (bytes: Buffer) => {
        const text = bytes.toString("utf8").trim()
        if (text.length === 0) return
        let message: unknown
        try {
          message = JSON.parse(text)
        } catch {
          return send(errorReply(null, PARSE_ERROR, "Parse error: the line is not JSON"))
        }
        if (Array.isArray(message)) return send(errorReply(null, INVALID_REQUEST, "JSON-RPC batches are not supported"))
        if (!isMessage(message)) return send(errorReply(null, INVALID_REQUEST, "a JSON-RPC message is an object"))
        controller.enqueue(message)
      }
      input.on("data", (chunk: Buffer) => {
        let rest = chunk
        while (rest.length > 0) {
          const newline = rest.indexOf(0x0a)
          const piece = newline === -1 ? rest : rest.subarray(0, newline)
          rest = newline === -1 ? Buffer.alloc(0) : rest.subarray(newline + 1)
          if (oversized !== undefined) {
            if (oversized.length < HEAD_BYTES) oversized = Buffer.concat([oversized, piece]).subarray(0, HEAD_BYTES)
          } else if (length + piece.length > maxLineBytes) {
            oversized = Buffer.concat([...chunks, piece]).subarray(0, HEAD_BYTES)
            chunks = []
            length = 0
          } else {
            chunks.push(piece)
            length += piece.length
          }
          if (newline === -1) break
          if (oversized !== undefined) {
            refuseOversized(oversized)
            oversized = undefined
          } else {
            line(Buffer.concat(chunks))
            chunks = []
            length = 0
          }
        }
      })
      input.once("end", () => {
        if (oversized !== undefined) refuseOversized(oversized)
        else if (length > 0) line(Buffer.concat(chunks))
        controller.close()
      })
      input.once("error", (error) => controller.error(error))
    }
  })
  const writable = new WritableStream<AnyMessage>({ write: (message) => send(message) })
  return { readable, writable }
}

interface ErrorReply {
  readonly jsonrpc: "2.0"
  readonly id: string | number | null
  readonly error: { readonly code: number; readonly message: string }
}

const errorReply = (id: string | number | null, code: number, message: string): ErrorReply => ({
  jsonrpc: "2.0",
  id,
  error: { code, message }
})

const tooLong = (max: number): string =>
  `Invalid request: the line is longer than ${max} bytes (planbridge acp reads lines of at most ${max} bytes)`

const isMessage = (value: unknown): value is AnyMessage =>
  typeof value === "object" && value !== null && !Array.isArray(value)
