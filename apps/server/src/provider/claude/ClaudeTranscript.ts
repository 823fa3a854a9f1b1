import { UserInputAnswerEntry } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import { PermissionResult } from "./ClaudeNative.ts"
import type { TranscriptLine } from "../kernel/transcript.ts"

/**
 * The lines the Claude mapping reads, in the kernel's one transcript format (`transcript.ts`):
 * every SDK message as received (`in`), and `local` lines for what happened on our side of the
 * SDK: the user messages we sent (with the turn id we minted), `canUseTool` calls and what we
 * returned, our decisions on prompts, interrupts, mode switches, a stdout line over the bound and
 * the process exit. A `local` line's message is `{kind, …}`, decoded by its Schema below.
 */

export const SDK_VERSION = "0.3.333"

/** `toolUseID` is ours (the reference recordings lack it; then calls pair up in order). */
export const CanUseToolResultLine = Schema.Struct({
  kind: Schema.Literal("canUseTool-result"),
  toolName: Schema.String,
  toolUseID: Schema.optionalKey(Schema.String),
  result: PermissionResult
})
export type CanUseToolResultLine = typeof CanUseToolResultLine.Type

/** Our decision on a pending native request, taken before the SDK callback is answered. */
const DecisionLine = Schema.Struct({
  kind: Schema.Literal("decision"),
  toolUseID: Schema.String,
  decision: Schema.Union([
    Schema.Struct({
      kind: Schema.Literal("prompt"),
      resolution: Schema.Literals(["answered", "empty", "cancelled"]),
      /** Already redacted. */
      answers: Schema.Array(UserInputAnswerEntry),
      reason: Schema.optionalKey(Schema.String)
    }),
    Schema.Struct({
      kind: Schema.Literal("plan"),
      decision: Schema.Literals(["approved", "rejected", "edited", "cancelled"]),
      feedback: Schema.optionalKey(Schema.String),
      editedMarkdown: Schema.optionalKey(Schema.String)
    }),
    Schema.Struct({ kind: Schema.Literal("approval"), optionId: Schema.Literals(["allow", "deny", "cancelled"]) })
  ])
})
export type Decision = (typeof DecisionLine.Type)["decision"]

export const ClaudeLocal = Schema.Union([
  Schema.Struct({
    kind: Schema.Literal("start"),
    cwd: Schema.String,
    permissionMode: Schema.String,
    model: Schema.String,
    sessionId: Schema.String,
    /** The setting sources loaded (user credentials mode); absent when none were (isolated). */
    settingSources: Schema.optionalKey(Schema.Array(Schema.String)),
    /** The SDK was told to `resume` this session instead of starting it. */
    resumed: Schema.optionalKey(Schema.Boolean)
  }),
  Schema.Struct({ kind: Schema.Literal("user"), turnId: Schema.String, text: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("interrupt") }),
  Schema.Struct({ kind: Schema.Literal("setPermissionMode"), mode: Schema.String }),
  Schema.Struct({
    kind: Schema.Literal("canUseTool"),
    toolName: Schema.String,
    input: Schema.Record(Schema.String, Schema.Unknown),
    options: Schema.Struct({ toolUseID: Schema.String, requestId: Schema.optionalKey(Schema.String) })
  }),
  CanUseToolResultLine,
  /** The SDK's `onElicitation` was called (ClaudeElicitation.ts); `key` is `elicitation:<requestId>`. */
  Schema.Struct({
    kind: Schema.Literal("elicitation"),
    key: Schema.String,
    request: Schema.Record(Schema.String, Schema.Unknown)
  }),
  Schema.Struct({
    kind: Schema.Literal("elicitation-result"),
    key: Schema.String,
    action: Schema.Literals(["accept", "decline", "cancel"])
  }),
  DecisionLine,
  /** The CLI wrote a stdout line over `MAX_LINE_BYTES` (`bytes` of it read): we ended it. */
  Schema.Struct({ kind: Schema.Literal("lineTooLong"), bytes: Schema.Finite }),
  Schema.Struct({
    kind: Schema.Literal("exit"),
    exitKind: Schema.Literals(["graceful", "crashed", "killed"]),
    exitCode: Schema.NullOr(Schema.Finite),
    signal: Schema.NullOr(Schema.String),
    message: Schema.optionalKey(Schema.String)
  })
])
export type ClaudeLocal = typeof ClaudeLocal.Type

/** An SDK message as received: any JSON object with a string `type`. */
export interface SdkMessage {
  readonly type: string
  readonly [key: string]: unknown
}

/** A transcript line as the Claude mapping reads it: its `local` message decoded. */
export type ClaudeLine =
  | { readonly t: number; readonly dir: "in"; readonly msg: SdkMessage }
  | { readonly t: number; readonly dir: "local"; readonly msg: ClaudeLocal }

const decodeLocal = Schema.decodeUnknownResult(ClaudeLocal)

/** A transcript line → the line the Claude mapping reads (replay), or why it is none. */
export const claudeLineOf = (line: TranscriptLine): Result.Result<ClaudeLine, string> => {
  const msg = line.msg
  if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return Result.fail("msg is not a JSON object")
  if (line.dir === "in") {
    if (!("type" in msg) || typeof msg.type !== "string") return Result.fail("an SDK message without a string type")
    return Result.succeed({ t: line.t, dir: "in", msg: msg as SdkMessage })
  }
  if (line.dir === "out") return Result.fail("a Claude transcript has no out lines (our side is local)")
  const decoded = decodeLocal(msg)
  return Result.isSuccess(decoded)
    ? Result.succeed({ t: line.t, dir: "local", msg: decoded.success })
    : Result.fail(`bad local line: ${decoded.failure.message}`)
}
