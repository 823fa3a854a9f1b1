import {
  CommandTable,
  encodeCommandResult,
  TURN_WINDOW,
  type Command,
  type CommandOf,
  type CommandSuccess,
  type CommandType,
  type ResolvedBy
} from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { commandError } from "../orchestration/CommandErrors.ts"
import { definedFields } from "../util/definedFields.ts"
import { SessionManager, type SessionError } from "../orchestration/SessionManager.ts"
import { ThreadReads } from "../persistence/ThreadReads.ts"
import type { ThreadFeed } from "./ThreadFeed.ts"
import type { ThreadListFeed } from "./ThreadListFeed.ts"

/**
 * A command's result that does not match its `success` Schema in the contracts' command table:
 * the server's fault, so it is never sent; the client gets `internal`, the log the whole cause.
 */
export class CommandResultMismatch extends Schema.TaggedError<CommandResultMismatch>()("CommandResultMismatch", {
  command: Schema.String,
  cause: Schema.Defect()
}) {}

/** What commands do with the connection's thread feed and thread list: (un)subscribe. */
export type CommandFeed = Pick<ThreadFeed, "subscribe" | "unsubscribe">
export type CommandThreadList = Pick<ThreadListFeed, "subscribe" | "unsubscribe" | "archive">

/** What a command runs with: the connection's feeds, who it is on behalf of, the sessions. */
interface DispatchContext {
  readonly feed: CommandFeed
  readonly threadList: CommandThreadList
  /** The connection's client, recorded by the resolutions its answers make. */
  readonly by: ResolvedBy
  readonly sessions: SessionManager["Service"]
}

type Handler<K extends CommandType> = (
  command: CommandOf<K>,
  context: DispatchContext
) => Effect.Effect<CommandSuccess<K>, SessionError | CommandResultMismatch, ThreadReads>

/** The store keeps a history page as JSON it wrote itself; it is checked as it is read back. */
const decodePage = Schema.decodeUnknownEffect(CommandTable["thread.history"].success)

/** One handler per command of the contracts' table, typed by its entry (a missing one does not compile). */
export const commandHandlers: { readonly [K in CommandType]: Handler<K> } = {
  "session.start": (command, { sessions }) =>
    sessions.startSession({
      provider: command.provider,
      cwd: command.cwd,
      mode: command.mode,
      ...definedFields({ waitPolicy: command.waitPolicy })
    }),
  "turn.start": (command, { sessions }) => sessions.startTurn(command.threadId, command.text, command.mode),
  "turn.interrupt": (command, { sessions, by }) => sessions.interrupt(command.threadId, by),
  "mode.set": (command, { sessions }) => sessions.setMode(command.threadId, command.mode),
  "userInput.respond": (command, { sessions, by }) =>
    sessions.respondToUserInput(command.promptId, command.answers, command.clientRequestId, by),
  "userInput.dismiss": (command, { sessions, by }) =>
    sessions.dismissUserInput(command.promptId, command.resolution, command.clientRequestId, by),
  "request.respond": (command, { sessions, by }) =>
    sessions.respondToRequest(command.requestId, command.optionId, command.clientRequestId, by),
  "plan.decide": (command, { sessions, by }) => {
    const { type: _t, clientRequestId, ...input } = command
    return sessions.decidePlan(input, clientRequestId, by)
  },
  "thread.subscribe": (command, { feed }) =>
    Effect.gen(function* () {
      const found = yield* feed.subscribe(command.threadId, command.afterSeq, command.window)
      if (!found) return yield* Effect.fail(commandError("unknown_thread", `no thread with id '${command.threadId}'`))
      return { threadId: command.threadId, subscribed: true as const }
    }),
  "thread.history": (command) =>
    Effect.gen(function* () {
      const page = yield* (yield* ThreadReads).historyJson(
        command.threadId,
        command.before,
        command.limit ?? TURN_WINDOW.default
      )
      if (page === "unknown_thread")
        return yield* Effect.fail(commandError("unknown_thread", `no thread with id '${command.threadId}'`))
      if (page === "invalid_cursor") {
        const message = `'${command.before}' is not a turn of thread '${command.threadId}'`
        return yield* Effect.fail(commandError("invalid_cursor", message, ["command", "before"]))
      }
      // A page is bounded (at most TURN_WINDOW.max turns), so parsing and checking it here is cheap.
      return yield* decodePage(JSON.parse(page.json)).pipe(
        Effect.mapError((cause) => new CommandResultMismatch({ command: command.type, cause }))
      )
    }),
  "thread.unsubscribe": (command, { feed }) =>
    Effect.map(feed.unsubscribe(command.threadId), (wasSubscribed) => ({
      threadId: command.threadId,
      subscribed: false as const,
      wasSubscribed
    })),
  "thread.resume": (command, { sessions }) => sessions.resumeSession(command.threadId, command.mode),
  "threads.list": (_command, { sessions }) =>
    Effect.gen(function* () {
      return { threads: yield* (yield* ThreadReads).list(sessions.isLive) }
    }),
  "threads.subscribe": (_command, { threadList }) => Effect.map(threadList.subscribe, (threads) => ({ threads })),
  "threads.unsubscribe": (_command, { threadList }) =>
    Effect.sync(() => ({ subscribed: false as const, wasSubscribed: threadList.unsubscribe() })),
  "thread.archive": (command, { threadList }) =>
    Effect.gen(function* () {
      const done = yield* threadList.archive(command.threadId, command.archived ?? true)
      if (done === undefined)
        return yield* Effect.fail(commandError("unknown_thread", `no thread with id '${command.threadId}'`))
      return { threadId: command.threadId, archivedAt: done.archivedAt }
    })
}

/** Runs command `type`'s handler: the one place where a command meets its own handler's type. */
const run = <K extends CommandType>(type: K, command: CommandOf<K>, context: DispatchContext) =>
  commandHandlers[type](command, context)

/**
 * A command's result as it goes on the wire: encoded with the command's `success` Schema, or a
 * `CommandResultMismatch` (never sent) when the server built something else.
 */
export const encodeResult = (type: CommandType, value: unknown): Effect.Effect<Schema.Json, CommandResultMismatch> =>
  Effect.mapError(encodeCommandResult(type, value), (cause) => new CommandResultMismatch({ command: type, cause }))

/**
 * Runs one client command; every command ends in its result as it goes on the wire, a typed
 * `CommandError`, a failed store, or a result that does not match the command table.
 * `by`: the connection's client, recorded by the resolutions its answers make.
 */
export const dispatchCommand = (
  command: Command,
  feed: CommandFeed,
  threadList: CommandThreadList,
  by: ResolvedBy
): Effect.Effect<Schema.Json, SessionError | CommandResultMismatch, SessionManager | ThreadReads> =>
  Effect.gen(function* () {
    const sessions = yield* SessionManager
    const value = yield* run(command.type, command, { feed, threadList, by, sessions })
    return yield* encodeResult(command.type, value)
  })
