import { Effect, Schema } from "effect"
import { describeCause } from "../util/describeCause.ts"

/**
 * What every reason keeps (as Effect's `SqlError` reasons do): a message for a person, and what
 * failed below the adapter as it was (`cause`: a spawn error, a JSON-RPC error object, the
 * emit's failure), never turned into text on its way.
 */
const ReasonFields = {
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}

/** The prompt was already resolved (a late answer, a second answer). */
export class PromptNotPending extends Schema.TaggedError<PromptNotPending>()("PromptNotPending", ReasonFields) {}
/** The request or plan is no longer awaiting an answer. */
export class RequestNotPending extends Schema.TaggedError<RequestNotPending>()("RequestNotPending", ReasonFields) {}
/** Unknown question or option id, free text where none is allowed, … */
export class InvalidAnswer extends Schema.TaggedError<InvalidAnswer>()("InvalidAnswer", ReasonFields) {}
/** The provider cannot do this (e.g. plan decisions on Codex). */
export class Unsupported extends Schema.TaggedError<Unsupported>()("Unsupported", ReasonFields) {}
/**
 * The kernel's rules (`kernel/OpenRequests.ts`): a new turn while a blocking question awaits us,
 * or while a turn runs on a provider that cannot steer (Claude, ACP); a mode switch while a turn
 * runs (Codex; Claude and ACP switch modes mid-turn).
 */
export class Busy extends Schema.TaggedError<Busy>()("Busy", ReasonFields) {}
/** The provider's process has exited. */
export class ProviderExited extends Schema.TaggedError<ProviderExited>()("ProviderExited", ReasonFields) {}
/** The provider answered with an error or in a shape we do not read; or its events were not recorded. */
export class ProtocolFailure extends Schema.TaggedError<ProtocolFailure>()("ProtocolFailure", ReasonFields) {}
/** The provider did not answer in time. */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", ReasonFields) {}
/** The provider's process or session did not start. */
export class StartFailed extends Schema.TaggedError<StartFailed>()("StartFailed", ReasonFields) {}
/**
 * A provider's configuration is refused before anything starts (a `--credentials` value, an ACP
 * agent flag or `acp-agents.json`): the message says where.
 */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", ReasonFields) {}
/**
 * A recorded transcript (or a `--replay` directory of them) does not replay: `line`, when the
 * failure is one line's, is its 0-based index (0: the meta line).
 */
export class InvalidTranscript extends Schema.TaggedError<InvalidTranscript>()("InvalidTranscript", {
  ...ReasonFields,
  line: Schema.optionalKey(Schema.Finite)
}) {}

export const AdapterErrorReason = Schema.Union([
  PromptNotPending,
  RequestNotPending,
  InvalidAnswer,
  Unsupported,
  Busy,
  ProviderExited,
  ProtocolFailure,
  Timeout,
  StartFailed,
  InvalidConfig,
  InvalidTranscript
])
export type AdapterErrorReason = typeof AdapterErrorReason.Type

/** The reason's name as adapters spell it at a call site and as `provider_error` messages show it. */
export type AdapterErrorKind = keyof typeof reasonClass

/** Each reason's class by its kind. */
const reasonClass = {
  prompt_not_pending: PromptNotPending,
  request_not_pending: RequestNotPending,
  invalid_answer: InvalidAnswer,
  unsupported: Unsupported,
  busy: Busy,
  provider_exited: ProviderExited,
  protocol: ProtocolFailure,
  timeout: Timeout,
  start_failed: StartFailed,
  invalid_config: InvalidConfig,
  invalid_transcript: InvalidTranscript
} as const

const kindOfTag: Readonly<Record<AdapterErrorReason["_tag"], AdapterErrorKind>> = {
  PromptNotPending: "prompt_not_pending",
  RequestNotPending: "request_not_pending",
  InvalidAnswer: "invalid_answer",
  Unsupported: "unsupported",
  Busy: "busy",
  ProviderExited: "provider_exited",
  ProtocolFailure: "protocol",
  Timeout: "timeout",
  StartFailed: "start_failed",
  InvalidConfig: "invalid_config",
  InvalidTranscript: "invalid_transcript"
}

/** A provider adapter's failure (transport, process, replay, spawn, configuration alike): its `reason` says why. */
export class AdapterError extends Schema.TaggedError<AdapterError>()("AdapterError", {
  reason: AdapterErrorReason,
  /**
   * The tail of the provider's stderr when it failed, apart from the message: a failed start
   * shows it (it names a missing login or binary), a failed resume only logs it (the agent's own
   * trace says nothing to a person who clicked Resume).
   */
  stderr: Schema.optionalKey(Schema.String)
}) {
  /** The reason is the JavaScript error's cause (as Effect's `SqlError`): `Cause.pretty` shows the chain. */
  override readonly cause = this.reason
  override get message(): string {
    return this.reason.message
  }
  /** The reason's name as call sites spell it (`"busy"`, `"start_failed"`, …). */
  get kind(): AdapterErrorKind {
    return kindOfTag[this.reason._tag]
  }
}

/** A provider configuration refused before anything started (thrown by the CLI's set-up: `invalid_config`). */
export const isConfigRefusal = (error: unknown): error is AdapterError =>
  error instanceof AdapterError && error.reason._tag === "InvalidConfig"

/** An `AdapterError` of the given kind; `cause`: what failed below, kept as it is. */
export const adapterError = (
  kind: AdapterErrorKind,
  message: string,
  extra: { readonly cause?: unknown; readonly stderr?: string } = {}
): AdapterError => {
  const reason = new reasonClass[kind]("cause" in extra ? { message, cause: extra.cause } : { message })
  return new AdapterError(extra.stderr === undefined ? { reason } : { reason, stderr: extra.stderr })
}

/**
 * The `catch` of an `Effect.try` around a call into the provider's world: what was being done,
 * then the failure's own words; the failure itself is the reason's `cause`.
 */
export const adapterFailure =
  (kind: AdapterErrorKind, doing: string) =>
  (cause: unknown): AdapterError =>
    adapterError(kind, `${doing}: ${describeCause(cause)}`, { cause })

/** Fails with an `AdapterError`: the one shorthand every adapter uses. */
export const failAdapter = (
  kind: AdapterErrorKind,
  message: string,
  cause?: unknown
): Effect.Effect<never, AdapterError> => Effect.fail(adapterError(kind, message, cause === undefined ? {} : { cause }))

/**
 * `emit` failed: what the server's ingestion failed with (an `IngestionError`) is the `cause`,
 * as it was. Adapters do not read it; they pass it on in the `AdapterError` they fail with.
 */
export class EmitError extends Schema.TaggedError<EmitError>()("EmitError", {
  cause: Schema.Defect()
}) {
  override get message(): string {
    return describeCause(this.cause)
  }
}
