import { Result, Schema } from "effect"
import { isJsonRpcId, type JsonRpcId } from "../kernel/jsonRpcId.ts"

/**
 * The parts of ACP v1 messages this client reads, decoded leniently: unknown fields are
 * ignored (the raw payload travels with every canonical event anyway) and optional fields are
 * optional, so a newer agent does not break the mapping. Only what the mapping needs is
 * required.
 */

const Str = Schema.String
const opt = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

export const SessionMode = Schema.Struct({ id: Str, name: Schema.optionalKey(Str) })
export const SessionModeState = Schema.Struct({ currentModeId: Str, availableModes: Schema.Array(SessionMode) })
export type SessionModeState = typeof SessionModeState.Type

export const ConfigOption = Schema.Struct({
  id: Str,
  category: opt(Str),
  currentValue: Schema.optionalKey(Schema.Unknown),
  options: Schema.optionalKey(Schema.Array(Schema.Unknown))
})
export type ConfigOption = typeof ConfigOption.Type

export const AuthMethod = Schema.Struct({ id: Str, name: Schema.optionalKey(Str) })

export const InitializeResponse = Schema.Struct({
  protocolVersion: Schema.Finite,
  agentCapabilities: opt(
    Schema.Struct({
      loadSession: opt(Schema.Boolean),
      /** `resume` / `list`: `{}` when offered (ACP `SessionCapabilities`). */
      sessionCapabilities: opt(Schema.Struct({ resume: opt(Schema.Unknown), list: opt(Schema.Unknown) }))
    })
  ),
  authMethods: opt(Schema.Array(AuthMethod)),
  agentInfo: opt(Schema.Struct({ name: Str, version: Schema.optionalKey(Str) }))
})
export type InitializeResponse = typeof InitializeResponse.Type

export const SessionSetup = Schema.Struct({
  sessionId: Schema.optionalKey(Str),
  modes: opt(SessionModeState),
  configOptions: opt(Schema.Array(ConfigOption))
})

export const ContentBlock = Schema.Struct({ type: Str, text: Schema.optionalKey(Str) })

/** Our `session/prompt` params, as far as the mapping reads them (the user's content blocks). */
export const PromptRequest = Schema.Struct({ prompt: Schema.Array(ContentBlock) })

export const ToolCallFields = Schema.Struct({
  toolCallId: Str,
  title: opt(Str),
  kind: opt(Str),
  status: opt(Str),
  rawInput: Schema.optionalKey(Schema.Unknown),
  rawOutput: Schema.optionalKey(Schema.Unknown),
  content: opt(Schema.Array(Schema.Unknown))
})
export type ToolCallFields = typeof ToolCallFields.Type

export const PlanEntry = Schema.Struct({
  content: Str,
  priority: Schema.optionalKey(Str),
  status: Str
})
export type PlanEntry = typeof PlanEntry.Type

export const SessionUpdate = Schema.Struct({ sessionUpdate: Str })
export const ChunkUpdate = Schema.Struct({ content: ContentBlock })
export const PlanUpdate = Schema.Struct({ entries: Schema.Array(PlanEntry) })
/**
 * ACP's unstable `plan_update` (a client announcing the `plan` capability gets it instead of
 * `plan`): a plan by id, as checklist entries, markdown, or a file's URI (which this client cannot read).
 */
export const PlanUpdateV2 = Schema.Struct({
  plan: Schema.Struct({
    type: Str,
    planId: Str,
    entries: Schema.optionalKey(Schema.Array(PlanEntry)),
    content: Schema.optionalKey(Str)
  })
})
export const CurrentModeUpdate = Schema.Struct({ currentModeId: Str })
export const ConfigOptionUpdate = Schema.Struct({ configOptions: Schema.Array(ConfigOption) })

/** Our `session/set_mode` or `session/set_config_option` params, as far as the mapping reads them. */
export const ModeSwitch = Schema.Struct({ modeId: opt(Str), configId: opt(Str), value: opt(Str) })

export const SessionNotification = Schema.Struct({ sessionId: Str, update: Schema.Unknown })

export const PermissionOption = Schema.Struct({ optionId: Str, name: Str, kind: Str })
export type PermissionOption = typeof PermissionOption.Type

export const RequestPermission = Schema.Struct({
  sessionId: Str,
  toolCall: ToolCallFields,
  options: Schema.Array(PermissionOption)
})
export type RequestPermission = typeof RequestPermission.Type

/** The client's own answer to a permission request, as it went over the wire. */
export const PermissionResponse = Schema.Struct({
  outcome: Schema.Union([
    Schema.Struct({ outcome: Schema.Literal("selected"), optionId: Str }),
    Schema.Struct({ outcome: Schema.Literal("cancelled") })
  ])
})

export const PromptResponse = Schema.Struct({
  stopReason: Str,
  usage: opt(
    Schema.Struct({
      inputTokens: Schema.optionalKey(Schema.Finite),
      outputTokens: Schema.optionalKey(Schema.Finite),
      totalTokens: Schema.optionalKey(Schema.Finite),
      cachedReadTokens: opt(Schema.Finite),
      thoughtTokens: opt(Schema.Finite)
    })
  )
})
export type PromptResponse = typeof PromptResponse.Type

const decodeTextBlock = Schema.decodeUnknownResult(Schema.Struct({ content: Schema.Struct({ text: Str }) }))

/** Text of `content` blocks of a tool call (`[{type:"content", content:{type:"text", text}}]`). */
export const toolCallText = (content: ReadonlyArray<unknown> | null | undefined): string | undefined => {
  const texts = (content ?? []).flatMap((block) =>
    Result.match(decodeTextBlock(block), { onFailure: () => [], onSuccess: (b) => [b.content.text] })
  )
  return texts.length > 0 ? texts.join("\n") : undefined
}

/**
 * At most this many bytes of a line that is no JSON-RPC message are kept (in the warning and
 * the transcript), cut at a character boundary: enough to recognise it, bounded whatever the
 * agent wrote. Documented in EVENTS.md (`runtime.warning`, `invalid_line`).
 */
export const INVALID_LINE_MAX_BYTES = 4096

/**
 * Why a line from the agent is no JSON-RPC message the client can act on. `unknown_response`:
 * a response to no request of ours (an unknown id, a `null` id or none), which the SDK only
 * printed to the console.
 */
export const InvalidLineReason = Schema.Literals([
  "not_json",
  "batch",
  "not_object",
  "not_jsonrpc",
  "too_long",
  "unknown_response"
])
export type InvalidLineReason = typeof InvalidLineReason.Type

/** A line from the agent that is no JSON-RPC message, as the transport read it. */
export const InvalidLine = Schema.Struct({
  reason: InvalidLineReason,
  /** The line, cut to `INVALID_LINE_MAX_BYTES`. */
  text: Schema.String,
  /** Its full length in bytes (without the line ending). */
  bytes: Schema.Finite,
  truncated: Schema.Boolean,
  /** The JSON parser's message, for `not_json`. */
  error: Schema.optionalKey(Schema.String)
})
export type InvalidLine = typeof InvalidLine.Type

/** A JSON-RPC reply: the agent's to a request of ours, or ours to one of the agent's (`replyMessage`). */
export type Reply =
  | { readonly result: unknown }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } }

export type JsonObject = Readonly<Record<string, unknown>>
export const isRecord = (u: unknown): u is JsonObject => typeof u === "object" && u !== null

/** A JSON-RPC response (no method) as a reply with the id of the request it answers. */
export const replyOf = (message: unknown): (Reply & { readonly id: JsonRpcId }) | undefined => {
  if (!isRecord(message) || "method" in message || !isJsonRpcId(message.id)) return undefined
  const { id, error } = message
  if (!isRecord(error)) return { id, result: message.result }
  const code = typeof error.code === "number" ? error.code : -32603
  const text = typeof error.message === "string" ? error.message : "error"
  return { id, error: error.data === undefined ? { code, message: text } : { code, message: text, data: error.data } }
}
