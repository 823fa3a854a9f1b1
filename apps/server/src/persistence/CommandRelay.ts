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
      /** Fails with a relay reason of StoreError (`RelayUnreachable`, `RelayLost`, `RelayTokenMismatch`) when no reply came. */
    ) => Effect.Effect<RelayReply, StoreError>
    /** Runs `handle` for every command sent to this replica, for as long as the scope lives. */
    readonly serve: (
      handle: (command: Schema.Json) => Effect.Effect<RelayReply>
    ) => Effect.Effect<void, StoreError, Scope.Scope>
  }
>()("planbridge/CommandRelay") {}
