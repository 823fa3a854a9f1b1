import { Schema } from "effect"
import { PermissionResult } from "./ClaudeNative.ts"
import type { TranscriptLine } from "../kernel/transcript.ts"

/**
 * The lines the Claude mapping reads: every SDK message as received with `_t` (ms since the
 * session started) added, and `_local` lines for what happened on our side of the SDK: the user
 * messages we sent (with the turn id we minted), `canUseTool` calls and what we returned, our
 * decisions on prompts, interrupts, mode switches, a stdout line over the bound and the process
 * exit. They are recorded in the kernel's one transcript format (`transcriptLineOf`: SDK
 * messages are `in`, ours `local` with `kind` = `_local`), and replayed back into these lines.
 */

export const SDK_VERSION = "0.3.332"

const T = { t: Schema.Finite } as const

export const StartLine = Schema.Struct({
  _local: Schema.Literal("start"),
  ...T,
  cwd: Schema.String,
  permissionMode: Schema.String,
  model: Schema.String,
  sessionId: Schema.String,
  /** The setting sources loaded (user credentials mode); absent when none were (isolated). */
  settingSources: Schema.optionalKey(Schema.Array(Schema.String)),
  /** The SDK was told to `resume` this session instead of starting it. */
  resumed: Schema.optionalKey(Schema.Boolean)
})

export const UserLine = Schema.Struct({
  _local: Schema.Literal("user"),
  ...T,
  turnId: Schema.String,
  text: Schema.String
})

export const InterruptLine = Schema.Struct({ _local: Schema.Literal("interrupt"), ...T })

export const SetPermissionModeLine = Schema.Struct({
  _local: Schema.Literal("setPermissionMode"),
  ...T,
  mode: Schema.String
})

export const CanUseToolLine = Schema.Struct({
  _local: Schema.Literal("canUseTool"),
  ...T,
  toolName: Schema.String,
  input: Schema.Record(Schema.String, Schema.Unknown),
  options: Schema.Struct({ toolUseID: Schema.String, requestId: Schema.optionalKey(Schema.String) })
})
export type CanUseToolLine = typeof CanUseToolLine.Type

/** `toolUseID` is ours (the reference recordings lack it; then calls pair up in order). */
export const CanUseToolResultLine = Schema.Struct({
  _local: Schema.Literal("canUseTool-result"),
  ...T,
  toolName: Schema.String,
  toolUseID: Schema.optionalKey(Schema.String),
  result: PermissionResult
})
export type CanUseToolResultLine = typeof CanUseToolResultLine.Type

const AnswerEntry = Schema.Struct({
  questionId: Schema.String,
  selectedOptionIds: Schema.optionalKey(Schema.Array(Schema.String)),
  text: Schema.optionalKey(Schema.String),
  redacted: Schema.optionalKey(Schema.Literal(true))
})

/** Our decision on a pending native request, taken before the SDK callback is answered. */
export const DecisionLine = Schema.Struct({
  _local: Schema.Literal("decision"),
  ...T,
  toolUseID: Schema.String,
  decision: Schema.Union([
    Schema.Struct({
      kind: Schema.Literal("prompt"),
      resolution: Schema.Literals(["answered", "empty", "cancelled"]),
      /** Already redacted. */
      answers: Schema.Array(AnswerEntry),
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
export type DecisionLine = typeof DecisionLine.Type
export type Decision = DecisionLine["decision"]

export const ExitLine = Schema.Struct({
  _local: Schema.Literal("exit"),
  ...T,
  exitKind: Schema.Literals(["graceful", "crashed", "killed"]),
  exitCode: Schema.NullOr(Schema.Finite),
  signal: Schema.NullOr(Schema.String),
  message: Schema.optionalKey(Schema.String)
})

/** The CLI wrote a stdout line over `MAX_LINE_BYTES` (`bytes` of it read): we ended it. */
export const LineTooLongLine = Schema.Struct({ _local: Schema.Literal("lineTooLong"), ...T, bytes: Schema.Finite })

export const LocalLine = Schema.Union([
  StartLine,
  UserLine,
  InterruptLine,
  SetPermissionModeLine,
  CanUseToolLine,
  CanUseToolResultLine,
  DecisionLine,
  LineTooLongLine,
  ExitLine
])
export type LocalLine = typeof LocalLine.Type

/** An SDK message as recorded: any JSON object with a string `type`, plus `_t`. */
export interface SdkLine {
  readonly type: string
  readonly _t: number
  readonly [key: string]: unknown
}

export type NativeLine = LocalLine | SdkLine

export const isLocalLine = (line: NativeLine): line is LocalLine => "_local" in line

/** A mapped line as the kernel's transcript records it (`nativeLineOf` in `replay.ts` reverses it). */
export const transcriptLineOf = (line: NativeLine): TranscriptLine => {
  if (isLocalLine(line)) {
    const { _local: kind, t, ...fields } = line
    return { t, dir: "local", msg: { kind, ...fields } }
  }
  const { _t: t, ...msg } = line
  return { t, dir: "in", msg }
}
