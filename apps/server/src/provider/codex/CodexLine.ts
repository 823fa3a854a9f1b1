import { Result, Schema } from "effect"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { decodedOr } from "../kernel/Mapped.ts"
import { CodexLocal, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from "./CodexProtocol.ts"
import type { JsonRpcError, JsonRpcId } from "./CodexProtocol.ts"

/**
 * The one line the Codex mapping reads, decoded in one place for the live transport and the
 * replay alike: a transcript line (`kernel/transcript.ts`) whose JSON-RPC message is classified
 * once, here (the transport hands its response to a waiting request from the same classification
 * the mapping steps on), and whose `local` message is a `CodexLocal`. `msg` stays the message as
 * it was on the wire: the canonical events keep it whole in `raw`.
 */

/** A JSON-RPC message by its shape (Codex sends no `jsonrpc` field), or why it is none. */
export type CodexMessage =
  | ({ readonly type: "request" } & JsonRpcRequest)
  | ({ readonly type: "notification" } & JsonRpcNotification)
  | {
      readonly type: "response"
      readonly id: JsonRpcId
      readonly result?: unknown
      readonly error?: JsonRpcError
    }
  | { readonly type: "invalid"; readonly reason: string }

export type CodexLine =
  | { readonly dir: "in" | "out"; readonly msg: unknown; readonly message: CodexMessage }
  | { readonly dir: "local"; readonly msg: CodexLocal }
export type ExitLine = { readonly dir: "local"; readonly msg: Extract<CodexLocal, { readonly kind: "exit" }> }

export const isExit = (line: CodexLine): line is ExitLine => line.dir === "local" && line.msg.kind === "exit"

const decodeRequest = Schema.decodeUnknownResult(JsonRpcRequest)
const decodeNotification = Schema.decodeUnknownResult(JsonRpcNotification)
const decodeResponse = Schema.decodeUnknownResult(JsonRpcResponse)

/** The message as its shape `type` if it decoded, else invalid: why (or `reason`). */
const shaped = <T extends string, A>(type: T, decoded: Result.Result<A, Schema.SchemaError>, reason?: string) =>
  Result.isSuccess(decoded)
    ? { type, ...decoded.success }
    : { type: "invalid" as const, reason: reason ?? decoded.failure.message }

/** Which of the JSON-RPC shapes a parsed message is. */
export const classify = (msg: unknown): CodexMessage => {
  if (typeof msg !== "object" || msg === null || Array.isArray(msg))
    return { type: "invalid", reason: "not a JSON object" }
  if ("method" in msg)
    return "id" in msg ? shaped("request", decodeRequest(msg)) : shaped("notification", decodeNotification(msg))
  return shaped("response", decodeResponse(msg), "neither a request, a notification nor a response")
}

/** A message in either direction as the mapping reads it. */
export const messageLine = (dir: "in" | "out", msg: unknown): CodexLine => ({ dir, msg, message: classify(msg) })

/** A message we write, typed as we build it. */
export type SentMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse

/** A message we write as the mapping reads it, classified by its type: what we send is never decoded back. */
export const sentLine = (msg: SentMessage): CodexLine => ({
  dir: "out",
  msg,
  message:
    "method" in msg
      ? "id" in msg
        ? { type: "request", ...msg }
        : { type: "notification", ...msg }
      : { type: "response", ...msg }
})

/** A transcript line (a replay's, a test's) as the mapping reads it, or why it is no Codex line. */
export const decodeCodexLine = (line: TranscriptEntry): Result.Result<CodexLine, string> => {
  if (line.dir !== "local") return Result.succeed(messageLine(line.dir, line.msg))
  const failed = (why: string): Result.Result<CodexLine, string> => Result.fail(`not a Codex local line: ${why}`)
  return decodedOr(CodexLocal, failed)(line.msg, (msg) => Result.succeed({ dir: "local", msg }))
}

/** What a recorder keeps of a line: the transcript entry, without the classification. */
export const entryOf = (line: TranscriptEntry): TranscriptEntry => ({ dir: line.dir, msg: line.msg })
