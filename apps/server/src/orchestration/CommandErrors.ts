import { ErrorCode } from "@planbridge/contracts"
import { Schema } from "effect"
import { StoreError } from "../persistence/StoreError.ts"
import { AdapterError } from "../provider/AdapterError.ts"

const ErrorPath = Schema.Array(Schema.Union([Schema.String, Schema.Finite]))

/**
 * The server refused the command in the protocol's terms (a bad frame, an unknown thread, a
 * prompt resolved already): its code, message and path are what the client gets. `cause`: what
 * failed below when the refusal stands for a failure (a session that did not start).
 */
export class CommandRefused extends Schema.TaggedError<CommandRefused>()("CommandRefused", {
  code: ErrorCode,
  message: Schema.String,
  path: Schema.optionalKey(ErrorPath),
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/**
 * The live session's adapter refused or failed the command: the client's code and message are
 * made from the adapter's reason where a failure becomes wire text (server/WireErrors.ts).
 */
export class ProviderRefused extends Schema.TaggedError<ProviderRefused>()("ProviderRefused", {
  cause: AdapterError
}) {
  override get message(): string {
    return this.cause.message
  }
}

/**
 * The replica that owns the thread gave no reply to the relayed command (`cause`: the store error
 * whose reason says why): the client's words are made in server/WireErrors.ts.
 */
export class RelayFailed extends Schema.TaggedError<RelayFailed>()("RelayFailed", {
  cause: StoreError
}) {
  override get message(): string {
    return this.cause.message
  }
}

export const CommandErrorReason = Schema.Union([CommandRefused, ProviderRefused, RelayFailed])
export type CommandErrorReason = typeof CommandErrorReason.Type

/**
 * A command that did not succeed, whatever refused it: clients get a code (one of the protocol's
 * `ErrorCode`s), a message and maybe a path, made from the `reason` in server/WireErrors.ts.
 */
export class CommandError extends Schema.TaggedError<CommandError>()("CommandError", {
  reason: CommandErrorReason
}) {
  /** The reason is the JavaScript error's cause (as Effect's `SqlError`): `Cause.pretty` shows the chain. */
  override readonly cause = this.reason
  override get message(): string {
    return this.reason.message
  }
}

/**
 * The one message of `already_resolved`, whether the store saw the prompt or request resolved
 * or the provider session found it no longer pending (a race, or a plan it does not wait on).
 */
export const ALREADY_RESOLVED_MESSAGE =
  "already resolved: another answer came first, or it was cancelled or ended with its turn; the thread shows how it was resolved"

/** A refusal in the protocol's terms; `cause`: the failure it stands for, kept for the log. */
export const commandError = (
  code: ErrorCode,
  message: string,
  path?: ReadonlyArray<string | number>,
  extra: { readonly cause?: unknown } = {}
): CommandError =>
  new CommandError({
    reason: new CommandRefused({
      code,
      message,
      ...(path === undefined ? {} : { path: [...path] }),
      ...("cause" in extra ? { cause: extra.cause } : {})
    })
  })

/** An adapter's refusal or failure of a command on a live session. */
export const providerRefused = (error: AdapterError): CommandError =>
  new CommandError({ reason: new ProviderRefused({ cause: error }) })

/** A relayed command without a reply (`error`'s reason is a relay failure: `isRelayFailure`). */
export const relayFailed = (error: StoreError): CommandError =>
  new CommandError({ reason: new RelayFailed({ cause: error }) })

/** The prompt, request or plan was resolved before this answer (see ALREADY_RESOLVED_MESSAGE). */
export const alreadyResolved = (): CommandError => commandError("already_resolved", ALREADY_RESOLVED_MESSAGE)
