import { ErrorCode } from "@planbridge/contracts"
import { Context, type Effect, Schema, type Scope } from "effect"
import type { StoreError } from "./StoreError.ts"

/** What a relayed command came back with: the owner's result, or its typed refusal. */
export const RelayReply = Schema.Union([
  Schema.Struct({ ok: Schema.Literal(true), value: Schema.Json }),
  Schema.Struct({
    ok: Schema.Literal(false),
    code: ErrorCode,
    message: Schema.String,
    path: Schema.optionalKey(Schema.Array(Schema.Union([Schema.String, Schema.Finite])))
  })
])
export type RelayReply = typeof RelayReply.Type

/**
 * Why a relayed command has no reply: `unreachable` — the owner did not take it within the bound
 * (it was withdrawn: it will never run); `lost` — the owner took it and then lost its lease
 * before replying (it may or may not have run); `token_mismatch` — the owner could not open it
 * (the replicas do not share one token): it did not run.
 */
export class RelayError extends Schema.TaggedError<RelayError>()("RelayError", {
  reason: Schema.Literals(["unreachable", "lost", "token_mismatch"]),
  message: Schema.String
}) {}

/**
 * Carries a command for a thread to the replica that owns its session, and the owner's reply
 * back (PostgreSQL: postgres/PgCommandRelay.ts, a table plus NOTIFY). The command is JSON the
 * session manager defines; the relay only moves it, sealed with the deployment's token.
 */
export class CommandRelay extends Context.Service<
  CommandRelay,
  {
    /** Sends `command` to `owner` and waits for its reply. */
    readonly forward: (
      owner: string,
      threadId: string,
      command: Schema.Json
    ) => Effect.Effect<RelayReply, RelayError | StoreError>
    /** Runs `handle` for every command sent to this replica, for as long as the scope lives. */
    readonly serve: (
      handle: (command: Schema.Json) => Effect.Effect<RelayReply>
    ) => Effect.Effect<void, StoreError, Scope.Scope>
  }
>()("planbridge/CommandRelay") {}
