import { TURN_WINDOW, type Command, type ResolvedBy } from "@planbridge/contracts"
import { Effect } from "effect"
import { commandError } from "../orchestration/CommandErrors.ts"
import { definedFields } from "../util/definedFields.ts"
import { SessionManager, type SessionError } from "../orchestration/SessionManager.ts"
import { ThreadReads } from "../persistence/ThreadReads.ts"
import type { ThreadFeed } from "./ThreadFeed.ts"
import type { ThreadListFeed } from "./ThreadListFeed.ts"

export type CommandResult = object

/**
 * Runs one client command; every command ends in a result, a typed `CommandError`, or a failed
 * store. `by`: the connection's client, recorded by the resolutions its answers make.
 */
export const dispatchCommand = (
  command: Command,
  feed: ThreadFeed,
  threadList: ThreadListFeed,
  by: ResolvedBy
): Effect.Effect<CommandResult, SessionError, SessionManager | ThreadReads> =>
  Effect.gen(function* () {
    const sessions = yield* SessionManager
    switch (command.type) {
      case "session.start":
        return yield* sessions.startSession({
          provider: command.provider,
          cwd: command.cwd,
          mode: command.mode,
          ...definedFields({ waitPolicy: command.waitPolicy })
        })
      case "turn.start":
        return yield* sessions.startTurn(command.threadId, command.text, command.mode)
      case "turn.interrupt":
        return yield* sessions.interrupt(command.threadId, by)
      case "mode.set":
        return yield* sessions.setMode(command.threadId, command.mode)
      case "userInput.respond":
        return yield* sessions.respondToUserInput(command.promptId, command.answers, command.clientRequestId, by)
      case "userInput.dismiss":
        return yield* sessions.dismissUserInput(command.promptId, command.resolution, command.clientRequestId, by)
      case "request.respond":
        return yield* sessions.respondToRequest(command.requestId, command.optionId, command.clientRequestId, by)
      case "plan.decide": {
        const { type: _t, clientRequestId, ...input } = command
        return yield* sessions.decidePlan(input, clientRequestId, by)
      }
      case "thread.subscribe": {
        const found = yield* feed.subscribe(command.threadId, command.afterSeq, command.window)
        if (!found) return yield* Effect.fail(commandError("unknown_thread", `no thread with id '${command.threadId}'`))
        return { threadId: command.threadId, subscribed: true }
      }
      case "thread.history": {
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
        // A page is bounded (at most TURN_WINDOW.max turns), so parsing it here is cheap.
        return JSON.parse(page.json) as object
      }
      case "thread.unsubscribe": {
        const wasSubscribed = yield* feed.unsubscribe(command.threadId)
        return { threadId: command.threadId, subscribed: false, wasSubscribed }
      }
      case "thread.resume":
        return yield* sessions.resumeSession(command.threadId, command.mode)
      case "threads.list":
        return { threads: yield* (yield* ThreadReads).list(sessions.isLive) }
      case "threads.subscribe":
        return { threads: yield* threadList.subscribe }
      case "threads.unsubscribe":
        return { subscribed: false, wasSubscribed: threadList.unsubscribe() }
    }
  })
