import type { PromptId, RequestId, ResolvedBy, ThreadId, UserInputPrompt } from "@planbridge/contracts"
import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { makeReplicaRouting } from "../../src/orchestration/ReplicaRouting.ts"
import { routeSessionCommands, type SessionCommands } from "../../src/orchestration/RoutedCommands.ts"
import { AnswerTargets } from "../../src/persistence/AnswerTargets.ts"
import { CommandRelay } from "../../src/persistence/CommandRelay.ts"
import { SessionLeases } from "../../src/persistence/SessionLeases.ts"
import { RelayUnreachable, StoreError } from "../../src/persistence/StoreError.ts"
import { wireFailureOf } from "../../src/server/WireErrors.ts"

/**
 * Routing of session commands between replicas costs nothing on a single server: without leases
 * and a relay (SQLite, or PostgreSQL without replicas) an answer goes straight to the local
 * session, with no look-up of the thread it answers; with replicas it is looked up once to find
 * the thread's owner.
 */
const prompt = { promptId: "p1", questions: [] } as unknown as UserInputPrompt
const by: ResolvedBy = { actor: "user", via: "ws" }

/** Answer targets that count their look-ups. */
const countingTargets = () => {
  const lookups: Array<string> = []
  const targets = AnswerTargets.of({
    prompt: (promptId) =>
      Effect.sync(() => {
        lookups.push(`prompt ${promptId}`)
        return { promptId, threadId: "t1", status: "pending" as const, resolution: null, requestId: null, prompt }
      }),
    request: (requestId) =>
      Effect.sync(() => {
        lookups.push(`request ${requestId}`)
        return { requestId, threadId: "t1", status: "pending" as const }
      })
  })
  return { targets, lookups }
}

/** Local commands that say which ran. */
const localCommands = (ran: Array<string>): SessionCommands => {
  const resolved = (what: string, id: string) =>
    Effect.sync(() => {
      ran.push(what)
      return { promptId: id as PromptId, status: "resolved" as const }
    })
  return {
    startTurn: () => Effect.sync(() => (ran.push("startTurn"), { turnId: "u1" })),
    interrupt: () => Effect.sync(() => (ran.push("interrupt"), { interrupted: true as const })),
    setMode: (_threadId, mode) => Effect.sync(() => (ran.push("setMode"), { mode })),
    respondToUserInput: (promptId) => resolved("respondToUserInput", promptId),
    dismissUserInput: (promptId) => resolved("dismissUserInput", promptId),
    respondToRequest: (requestId) =>
      Effect.sync(() => (ran.push("respondToRequest"), { requestId, status: "resolved" as const })),
    decidePlan: (input) =>
      Effect.sync(() => (ran.push("decidePlan"), { planId: input.planId, status: "resolved" as const }))
  }
}

const answerAll = (commands: SessionCommands) =>
  Effect.gen(function* () {
    yield* commands.respondToUserInput("p1" as PromptId, [], "c1", by)
    yield* commands.dismissUserInput("p1" as PromptId, "cancelled", "c2", by)
    yield* commands.respondToRequest("r1" as RequestId, "allow" as never, "c3", by)
    yield* commands.startTurn("t1" as ThreadId, "hi")
  })

describe("replica routing", () => {
  it("on a single server: the local commands themselves, no look-up before an answer", async () => {
    const ran: Array<string> = []
    const { targets, lookups } = countingTargets()
    const local = localCommands(ran)
    const { routed } = await Effect.runPromise(
      Effect.map(
        makeReplicaRouting(() => false),
        ({ routing }) => routeSessionCommands(routing, targets, local, undefined)
      )
    )
    expect(routed.respondToUserInput).toBe(local.respondToUserInput)
    await Effect.runPromise(answerAll(routed))
    expect(ran).toEqual(["respondToUserInput", "dismissUserInput", "respondToRequest", "startTurn"])
    expect(lookups).toEqual([])
  })

  it("with replicas: each answer looks its thread up once, and runs here when nobody else owns it", async () => {
    const ran: Array<string> = []
    const owners: Array<string> = []
    const { targets, lookups } = countingTargets()
    const leases = SessionLeases.of({
      replicaId: "here",
      ttlMs: 1000,
      claim: () => Effect.succeed(undefined),
      release: () => Effect.void,
      ownerElsewhere: (threadId) => Effect.sync(() => (owners.push(threadId), undefined)),
      renew: Effect.succeed([]),
      expired: Effect.succeed([]),
      liveElsewhere: () => false
    })
    const relay = CommandRelay.of({
      forward: () => Effect.die("nothing is relayed when nobody else owns the thread"),
      serve: () => Effect.void
    })
    const { routed } = await Effect.runPromise(
      makeReplicaRouting(() => false).pipe(
        Effect.map(({ routing }) => routeSessionCommands(routing, targets, localCommands(ran), "here")),
        Effect.provideService(SessionLeases, leases),
        Effect.provideService(CommandRelay, relay)
      )
    )
    await Effect.runPromise(answerAll(routed))
    expect(ran).toEqual(["respondToUserInput", "dismissUserInput", "respondToRequest", "startTurn"])
    expect(lookups).toEqual(["prompt p1", "prompt p1", "request r1"])
    expect(owners).toEqual(["t1", "t1", "t1", "t1"])
  })

  it("a relayed command without a reply: the relay's store error is the refusal's cause, worded in WireErrors", async () => {
    const ran: Array<string> = []
    const { targets } = countingTargets()
    const leases = SessionLeases.of({
      replicaId: "here",
      ttlMs: 1000,
      claim: () => Effect.succeed(undefined),
      release: () => Effect.void,
      ownerElsewhere: () => Effect.succeed("there"),
      renew: Effect.succeed([]),
      expired: Effect.succeed([]),
      liveElsewhere: () => true
    })
    const unreachable = new StoreError({ reason: new RelayUnreachable({ threadId: "t1", boundMs: 1000 }) })
    const relay = CommandRelay.of({ forward: () => Effect.fail(unreachable), serve: () => Effect.void })
    const exit = await Effect.runPromiseExit(
      makeReplicaRouting(() => false).pipe(
        Effect.map(({ routing }) => routeSessionCommands(routing, targets, localCommands(ran), "here")),
        Effect.flatMap(({ routed }) => routed.startTurn("t1" as ThreadId, "hi")),
        Effect.provideService(SessionLeases, leases),
        Effect.provideService(CommandRelay, relay)
      )
    )
    expect(ran).toEqual([])
    if (!Exit.isFailure(exit)) throw new Error("expected the relayed turn to fail")
    const failure = Cause.findErrorOption(exit.cause)
    const refusal = failure._tag === "Some" ? failure.value : undefined
    expect(refusal).toMatchObject({ _tag: "CommandError", reason: { _tag: "RelayFailed" } })
    expect(refusal).toHaveProperty("reason.cause", unreachable)
    // The words clients read before the fold, made in WireErrors.ts.
    expect(wireFailureOf(exit.cause, "command")).toEqual({
      error: {
        code: "session_not_live",
        message:
          "the replica that owns thread t1 did not take the command within 1000 ms; it was withdrawn and did not run"
      }
    })
  })
})
