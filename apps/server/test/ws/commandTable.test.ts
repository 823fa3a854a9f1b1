import { Command, CommandTable, commandTypes, type ResolvedBy, type ThreadId } from "@planbridge/contracts"
import { Cause, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { SessionManager } from "../../src/orchestration/SessionManager.ts"
import { ThreadReads } from "../../src/persistence/ThreadReads.ts"
import { wireFailureOf } from "../../src/server/WireErrors.ts"
import {
  commandHandlers,
  dispatchCommand,
  type CommandFeed,
  type CommandThreadList
} from "../../src/ws/CommandDispatcher.ts"

// The contracts' command table against what the server dispatches: every command of the
// protocol has an entry and a handler, and a result that is not what its entry says is never
// sent (the client gets `internal`, the log the cause).

const unionTypes = Command.members.map((member) => member.fields.type.schema.literal)

describe("the command table", () => {
  it("has an entry for every command of the protocol, and the server a handler for every entry", () => {
    expect([...commandTypes].sort()).toEqual([...unionTypes].sort())
    expect(Object.keys(commandHandlers).sort()).toEqual([...commandTypes].sort())
    for (const type of commandTypes)
      expect(CommandTable[type].payload.fields.type.schema.literal, `the payload of ${type}`).toBe(type)
  })
})

const unused = Effect.die("not used by this test")
/** A session manager whose `turn.start` answers `turnId` (a number where the table says a string, for the bug case). */
const sessionsAnswering = (turnId: unknown) =>
  Layer.succeed(
    SessionManager,
    SessionManager.of({
      startSession: () => unused,
      resumeSession: () => unused,
      isLive: () => false,
      closeAll: Effect.void,
      // What a handler with a bug would build: JSON whose shape the compiler cannot see.
      startTurn: () => Effect.succeed(JSON.parse(JSON.stringify({ turnId }))),
      interrupt: () => unused,
      setMode: () => unused,
      respondToUserInput: () => unused,
      dismissUserInput: () => unused,
      respondToRequest: () => unused,
      decidePlan: () => unused
    })
  )
const noReads = Layer.succeed(
  ThreadReads,
  ThreadReads.of({
    snapshot: () => unused,
    snapshotJson: () => unused,
    historyJson: () => unused,
    list: () => unused,
    exists: () => unused,
    runningTurn: () => unused,
    summary: () => unused,
    setArchived: () => unused
  })
)
const feed: CommandFeed = { subscribe: () => unused, unsubscribe: () => unused }
const threadList: CommandThreadList = { subscribe: unused, unsubscribe: () => false, archive: () => unused }
const by: ResolvedBy = { actor: "user", via: "ws" }
const turnStart = { type: "turn.start", threadId: "t-1" as ThreadId, text: "hello" } as const

const dispatchWith = (turnId: unknown) =>
  Effect.runPromiseExit(
    dispatchCommand(turnStart, feed, threadList, by).pipe(
      Effect.provide(Layer.merge(sessionsAnswering(turnId), noReads))
    )
  )

describe("results on the server", () => {
  it("are encoded with the command's success Schema", async () => {
    const exit = await dispatchWith("turn-1")
    expect(exit).toEqual(Exit.succeed({ turnId: "turn-1" }))
  })

  it("that do not match it are refused with a typed error, told to the client as internal, and not sent", async () => {
    const exit = await dispatchWith(42)
    expect(Exit.isFailure(exit)).toBe(true)
    if (!Exit.isFailure(exit)) return
    const error = Cause.findErrorOption(exit.cause)
    expect(error._tag === "Some" ? error.value : undefined).toMatchObject({
      _tag: "CommandResultMismatch",
      command: "turn.start"
    })
    const failure = wireFailureOf(exit.cause, "command")
    expect(failure.error).toEqual({
      code: "internal",
      message: "the command failed unexpectedly; the server logged it"
    })
    // The log gets the whole cause: which command, and where its result went wrong.
    expect(failure.unexpected).toContain("CommandResultMismatch")
    expect(failure.unexpected).toContain('["turnId"]')
  })
})
