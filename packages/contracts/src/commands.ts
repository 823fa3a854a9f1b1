import { Exit, Schema } from "effect"
import { IsoDateTime, ThreadId } from "./ids.ts"
import {
  ErrorInfo,
  ModeSetCommand,
  PlanDecideCommand,
  RequestRespondCommand,
  SessionStartCommand,
  ThreadHistoryCommand,
  ThreadResumeCommand,
  ThreadsListCommand,
  ThreadsSubscribeCommand,
  ThreadSubscribeCommand,
  ThreadArchiveCommand,
  ThreadsUnsubscribeCommand,
  ThreadUnsubscribeCommand,
  TurnInterruptCommand,
  TurnStartCommand,
  UserInputDismissCommand,
  UserInputRespondCommand,
  type Command
} from "./protocol.ts"
import { ThreadHistoryPage, ThreadListEntry, ThreadSummary } from "./snapshot.ts"
import { OperatingMode } from "./provider.ts"

/**
 * The command table: for each client → server command, what it carries (`payload`, the command
 * inside a `command` frame), what its `result` frame's `result` holds (`success`) and what its
 * `error` frame's `error` holds (`error`), in one place, in the manner of `Rpc.make(name,
 * {payload, success, error})`. The server encodes every result with `success` (a value that does
 * not match is never sent), a replica decodes a relayed command's reply with it, and the client
 * decodes each result with it, so its methods are typed from here. Adding a command is one entry
 * below (and its payload in protocol.ts's `Command`): the `satisfies` clause refuses a command
 * of `Command` without an entry, and an entry that is not a command.
 *
 * Results are plain JSON (their Type is their Encoded form), so an encoded result is the value
 * itself; fields are declared in the order the server builds them, so its frames keep their bytes.
 */

// ---- results --------------------------------------------------------------------------------

export const SessionStartResult = Schema.Struct({ threadId: ThreadId })
export const TurnStartResult = Schema.Struct({ turnId: Schema.String })
export const TurnInterruptResult = Schema.Struct({ interrupted: Schema.Literal(true) })
export const ModeSetResult = Schema.Struct({ mode: OperatingMode })
/**
 * What an answer-like command (`userInput.respond`, `userInput.dismiss`, `request.respond`,
 * `plan.decide`) answers: the id it resolved. The server remembers it per `clientRequestId` and
 * answers a retry with it again.
 */
export const ResolutionOutcome = Schema.Struct({
  promptId: Schema.optionalKey(Schema.String),
  requestId: Schema.optionalKey(Schema.String),
  planId: Schema.optionalKey(Schema.String),
  status: Schema.Literal("resolved")
})
export type ResolutionOutcome = typeof ResolutionOutcome.Type
export const ThreadSubscribeResult = Schema.Struct({ threadId: ThreadId, subscribed: Schema.Literal(true) })
export const ThreadUnsubscribeResult = Schema.Struct({
  threadId: ThreadId,
  subscribed: Schema.Literal(false),
  /** False when the connection did not follow the thread. */
  wasSubscribed: Schema.Boolean
})
export const ThreadsListResult = Schema.Struct({ threads: Schema.Array(ThreadSummary) })
/** `resumed: false` when the thread was live already (nothing started); `resumedFrom`: the native session it continues. */
export const ThreadResumeResult = Schema.Struct({
  threadId: ThreadId,
  resumed: Schema.Boolean,
  resumedFrom: Schema.optionalKey(Schema.String)
})
export type ThreadResumeResult = typeof ThreadResumeResult.Type
export const ThreadsSubscribeResult = Schema.Struct({ threads: Schema.Array(ThreadListEntry) })
export const ThreadsUnsubscribeResult = Schema.Struct({
  subscribed: Schema.Literal(false),
  /** False when the connection did not follow the list. */
  wasSubscribed: Schema.Boolean
})
/** The archive time in force after `thread.archive` (null: not archived). */
export const ThreadArchiveResult = Schema.Struct({ threadId: ThreadId, archivedAt: Schema.NullOr(IsoDateTime) })

// ---- the table ------------------------------------------------------------------------------

/** One command's entry; its payload must be the `Command` member of its name. */
interface CommandSpec<P> {
  readonly payload: Schema.Top & { readonly Type: P }
  readonly success: Schema.Codec<unknown, unknown> & Schema.Top
  readonly error: typeof ErrorInfo
}
type CommandSpecs = { readonly [K in Command["type"]]: CommandSpec<Extract<Command, { readonly type: K }>> }

/** Every command fails with an `ErrorInfo`; clients branch on its `code` (PROTOCOL.md, "Error codes"). */
export const CommandTable = {
  "session.start": { payload: SessionStartCommand, success: SessionStartResult, error: ErrorInfo },
  "turn.start": { payload: TurnStartCommand, success: TurnStartResult, error: ErrorInfo },
  "turn.interrupt": { payload: TurnInterruptCommand, success: TurnInterruptResult, error: ErrorInfo },
  "mode.set": { payload: ModeSetCommand, success: ModeSetResult, error: ErrorInfo },
  "userInput.respond": { payload: UserInputRespondCommand, success: ResolutionOutcome, error: ErrorInfo },
  "userInput.dismiss": { payload: UserInputDismissCommand, success: ResolutionOutcome, error: ErrorInfo },
  "request.respond": { payload: RequestRespondCommand, success: ResolutionOutcome, error: ErrorInfo },
  "plan.decide": { payload: PlanDecideCommand, success: ResolutionOutcome, error: ErrorInfo },
  "thread.subscribe": { payload: ThreadSubscribeCommand, success: ThreadSubscribeResult, error: ErrorInfo },
  "thread.history": { payload: ThreadHistoryCommand, success: ThreadHistoryPage, error: ErrorInfo },
  "thread.unsubscribe": { payload: ThreadUnsubscribeCommand, success: ThreadUnsubscribeResult, error: ErrorInfo },
  "threads.list": { payload: ThreadsListCommand, success: ThreadsListResult, error: ErrorInfo },
  "thread.resume": { payload: ThreadResumeCommand, success: ThreadResumeResult, error: ErrorInfo },
  "threads.subscribe": { payload: ThreadsSubscribeCommand, success: ThreadsSubscribeResult, error: ErrorInfo },
  "threads.unsubscribe": { payload: ThreadsUnsubscribeCommand, success: ThreadsUnsubscribeResult, error: ErrorInfo },
  "thread.archive": { payload: ThreadArchiveCommand, success: ThreadArchiveResult, error: ErrorInfo }
} as const satisfies CommandSpecs

export type CommandType = keyof typeof CommandTable
/** The command named `K`, as it travels in a `command` frame. */
export type CommandOf<K extends CommandType> = (typeof CommandTable)[K]["payload"]["Type"]
/** What command `K`'s `result` frame holds. */
export type CommandSuccess<K extends CommandType> = (typeof CommandTable)[K]["success"]["Type"]

/** The command names, in the table's order. */
export const commandTypes: ReadonlyArray<CommandType> = Object.keys(CommandTable).filter((type): type is CommandType =>
  Object.hasOwn(CommandTable, type)
)

/**
 * A result of command `type` as it goes on the wire: checked against the table (a value that does
 * not match is a `SchemaError` naming the path), fields the table does not know dropped.
 */
export const encodeCommandResult = (type: CommandType, value: unknown): Exit.Exit<Schema.Json, Schema.SchemaError> =>
  Schema.encodeUnknownExit(CommandTable[type].success)(value)

/** A `result` frame's `result` as command `type`'s success, or a `SchemaError` naming the path. */
export const decodeCommandResult = <K extends CommandType>(
  type: K,
  json: unknown
): Exit.Exit<CommandSuccess<K>, Schema.SchemaError> => Schema.decodeUnknownExit(CommandTable[type].success)(json)
