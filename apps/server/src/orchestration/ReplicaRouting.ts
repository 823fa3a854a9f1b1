import {
  decodeCommandResult,
  encodeCommandResult,
  ModeSetCommand,
  type CommandSuccess,
  PlanDecideCommand,
  RequestRespondCommand,
  ResolvedBy,
  TurnInterruptCommand,
  TurnStartCommand,
  UserInputDismissCommand,
  UserInputRespondCommand
} from "@planbridge/contracts"
import { Effect, Option, Schema } from "effect"
import { CommandRelay, type RelayReply } from "../persistence/CommandRelay.ts"
import { SessionLeases } from "../persistence/SessionLeases.ts"
import { isRelayFailure, StoreError } from "../persistence/StoreError.ts"
import { commandError, relayFailed, type CommandError } from "./CommandErrors.ts"
import { errorInfoOf } from "../server/WireErrors.ts"

/** The commands for a live session that another replica may have to run: the protocol's own. */
export const RelayedCommand = Schema.Union([
  TurnStartCommand,
  TurnInterruptCommand,
  ModeSetCommand,
  UserInputRespondCommand,
  UserInputDismissCommand,
  RequestRespondCommand,
  PlanDecideCommand
])
export type RelayedCommand = typeof RelayedCommand.Type

/**
 * What travels to the owner: the command, and for an answer who sent it (the replica that took
 * it from its client records itself there), so that the owner's resolution says so.
 */
const RelayedEnvelope = Schema.Struct({ command: RelayedCommand, by: Schema.optionalKey(ResolvedBy) })
const decodeEnvelope = Schema.decodeUnknownEffect(RelayedEnvelope)
const encodeEnvelope = Schema.encodeSync(RelayedEnvelope)

type ResultOf<C extends RelayedCommand> = CommandSuccess<C["type"]>

/**
 * A reply from the owner as this replica's own outcome: its value, decoded with the command
 * table (never taken on trust), or its typed refusal.
 */
const fromReply = <C extends RelayedCommand>(
  command: C,
  reply: RelayReply
): Effect.Effect<ResultOf<C>, CommandError> => {
  if (!reply.ok) return Effect.fail(commandError(reply.code, reply.message, reply.path))
  const type: C["type"] = command.type
  return decodeCommandResult(type, reply.value).pipe(
    Effect.mapError(() => commandError("internal", `the owning replica's reply to ${command.type} is malformed`))
  )
}

/**
 * An outcome of this replica as a reply for the replica that relayed the command: its result
 * encoded with the command table (as a client would get it), or its refusal.
 */
export const toReply = (
  type: RelayedCommand["type"],
  outcome: Effect.Effect<unknown, CommandError | StoreError>
): Effect.Effect<RelayReply> =>
  outcome.pipe(
    Effect.flatMap((value) =>
      Effect.mapError(encodeCommandResult(type, value), () =>
        commandError("internal", `the owning replica's result of ${type} does not match the command table`)
      )
    ),
    Effect.map((value): RelayReply => ({ ok: true, value })),
    Effect.catch((error) => Effect.succeed(refusalOf(error)))
  )

/** A refusal as a reply: a failed store tells the relaying replica nothing of its cause. */
const refusalOf = (error: CommandError | StoreError): RelayReply =>
  error instanceof StoreError
    ? { ok: false, code: "internal", message: `the owning replica's store failed: ${error.message}` }
    : { ok: false, ...errorInfoOf(error) }

export interface ReplicaRouting {
  /**
   * Whether this server shares its store with replicas (session leases and a command relay):
   * false on a single server (SQLite, or PostgreSQL without `replica`), where every session is
   * local and nothing is looked up or relayed (RoutedCommands.ts).
   */
  readonly replicated: boolean
  /**
   * Runs `local` when the thread's session is here or no other replica holds it (one server, or
   * nobody: `local` then says why it cannot run); else relays the command to the owner and
   * answers with the owner's outcome.
   */
  readonly route: <C extends RelayedCommand>(
    threadId: string,
    command: C,
    local: Effect.Effect<ResultOf<C>, CommandError | StoreError>,
    by?: ResolvedBy
  ) => Effect.Effect<ResultOf<C>, CommandError | StoreError>
  /** Serves commands relayed to this replica with `run` (the session manager's local path). */
  readonly serve: (
    run: (command: RelayedCommand, by: ResolvedBy | undefined) => Effect.Effect<object, CommandError | StoreError>
  ) => Effect.Effect<void, StoreError, import("effect").Scope.Scope>
}

/**
 * Routing of commands between replicas (PostgreSQL), or none (SQLite: every session is local).
 * `isLocal` is the session manager's own map of live sessions.
 */
export const makeReplicaRouting = (isLocal: (threadId: string) => boolean) =>
  Effect.gen(function* () {
    const leases = Option.getOrUndefined(yield* Effect.serviceOption(SessionLeases))
    const relay = Option.getOrUndefined(yield* Effect.serviceOption(CommandRelay))
    const routing: ReplicaRouting = {
      replicated: leases !== undefined && relay !== undefined,
      route: (threadId, command, local, by) =>
        Effect.suspend(() => {
          if (leases === undefined || relay === undefined || isLocal(threadId)) return local
          return Effect.flatMap(leases.ownerElsewhere(threadId), (owner) =>
            owner === undefined
              ? local
              : relay
                  .forward(
                    owner,
                    threadId,
                    encodeEnvelope(by === undefined ? { command } : { command, by }) as Schema.Json
                  )
                  .pipe(
                    Effect.catchTag("StoreError", (error) =>
                      Effect.fail(isRelayFailure(error.reason) ? relayFailed(error) : error)
                    ),
                    Effect.flatMap((reply) => fromReply(command, reply))
                  )
          )
        }),
      serve: (run) =>
        relay === undefined
          ? Effect.void
          : relay.serve((json) =>
              decodeEnvelope(json).pipe(
                Effect.matchEffect({
                  onFailure: () =>
                    Effect.succeed(refusalOf(commandError("invalid_frame", "a relayed command does not decode"))),
                  onSuccess: (envelope) => toReply(envelope.command.type, run(envelope.command, envelope.by))
                })
              )
            )
    }
    return { routing, leases }
  })
