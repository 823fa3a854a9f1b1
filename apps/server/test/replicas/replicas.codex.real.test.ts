import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { processesCarrying, recordedGroupTokens, stopServe, type ServeProcess } from "../chaos/rig.ts"
import { askTwoQuestions, planReply } from "../provider/codex/realPeerSupport.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { functionCallOutputs, startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { makeReplicaDir } from "../support/replicaDir.ts"
import {
  allEvents,
  client,
  errorOf,
  expectGapFree,
  resultOf,
  serve,
  serveEnv,
  sigkill,
  waitEvent,
  type EventFrame
} from "../support/resumeRig.ts"
import type { TestClient } from "../support/wsClient.ts"

/**
 * Issue 18: three `planbridge serve` replicas on one PostgreSQL 15 database (started by the
 * test, on loopback), the real `codex app-server` 0.171.0 behind them with its model scripted,
 * clients spread over the replicas. Commands for the thread reach the replica that owns its
 * session from any other (relayed through PostgreSQL); every client sees the same gap-free
 * stream; two answers to one question on two replicas have one winner; when the owner is
 * SIGKILLed its lease expires, another replica closes what it left pending, and `thread.resume`
 * there continues the conversation.
 */
const LEASE_TTL_MS = 3_000
/** Rounds of the two-replica answer race (PLANBRIDGE_RACE_ROUNDS for a longer stress run). */
const RACE_ROUNDS = Number(process.env.PLANBRIDGE_RACE_ROUNDS ?? 6)
const TOKEN = "replica-token-".padEnd(40, "x")
const FIRST_TEXT = "Plan a small HTTP service for me."
const started = Date.now()

let postgres: TestPostgres
let mock: MockResponsesModel
let cwd: string
const dataDirs: Array<string> = []
const replicas: Array<ServeProcess> = []
let threadId: string
let nativeThreadId: string

/** A data dir holding the deployment's shared token (every replica has its own dir). */
const replicaDir = (): string => {
  const dir = makeReplicaDir(TOKEN)
  dataDirs.push(dir)
  return dir
}

beforeAll(async () => {
  assertLoopbackOnly()
  postgres = await startPostgres()
  const url = await postgres.createDatabase("replicas")
  cwd = mkdtempSync(join(tmpdir(), "planbridge-replica-cwd-"))
  mock = await startMockResponsesModel()
  const env = serveEnv({
    OPENAI_API_KEY: "sk-planbridge-replicas-test",
    PLANBRIDGE_CODEX_BASE_URL: mock.baseUrl,
    PLANBRIDGE_CODEX_MODEL: "gpt-5.5",
    PLANBRIDGE_STORE: url,
    PLANBRIDGE_LEASE_TTL_MS: String(LEASE_TTL_MS)
  })
  // One after the other: the first migrates the database, the others find it migrated.
  for (let i = 0; i < 3; i++) replicas.push(await serve(replicaDir(), env))
}, 180_000)

afterAll(async () => {
  await Promise.all(replicas.map((r) => stopServe(r)))
  // The SIGKILLed replica's provider processes (an orphaned app-server) are ended here.
  for (const dir of dataDirs)
    for (const pid of processesCarrying(new Set(recordedGroupTokens(dir)))) process.kill(pid, "SIGKILL")
  await mock?.close()
  postgres?.stop()
  for (const dir of [...dataDirs, cwd]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  console.info(`replicas.codex.real.test.ts wall time: ${Date.now() - started} ms`)
})

const subscribeAll = async (clients: ReadonlyArray<TestClient>) => {
  for (const c of clients)
    resultOf(await c.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
}
const seen = (c: TestClient) =>
  c.frames
    .filter((f): f is EventFrame => f.type === "event" && f.threadId === threadId)
    .map((f) => [f.seq, f.event.eventId])

describe("three replicas on one PostgreSQL database, the real Codex app-server", { timeout: 240_000 }, () => {
  it("a plan turn owned by A, started from B and answered from C: one gap-free stream on all three; the answer race has one winner", async () => {
    const [a, b, c] = await Promise.all(replicas.map((r) => client(r)))
    try {
      mock.script({ output: [askTwoQuestions] }, { output: [planReply] })
      ;({ threadId } = resultOf(await a!.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })) as {
        threadId: string
      })
      await subscribeAll([a!, b!, c!])
      const startedEvent = await waitEvent(c!, "session.started", threadId)
      if (startedEvent.event.type !== "session.started") throw new Error("unreachable")
      nativeThreadId = startedEvent.event.payload.nativeThreadId!
      // Every replica lists the thread as live, wherever its session runs (the others learn it
      // from the leases, read every third of the lease time).
      const liveOn = async (x: TestClient) => {
        const { threads } = resultOf(await x.command({ type: "threads.list" })) as {
          threads: Array<{ threadId: string; live: boolean }>
        }
        return threads.find((t) => t.threadId === threadId)?.live ?? false
      }
      for (const x of [a!, b!, c!]) await expect.poll(() => liveOn(x), { timeout: LEASE_TTL_MS }).toBe(true)

      // B does not own the session: its turn.start is relayed to A, and B gets A's result.
      const turn = resultOf(await b!.command({ type: "turn.start", threadId: threadId as never, text: FIRST_TEXT }))
      expect(turn).toMatchObject({ turnId: expect.any(String) })
      const asked = await waitEvent(c!, "user-input.requested", threadId)
      if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
      const promptId = asked.event.payload.prompt.promptId

      // Two clients on two non-owner replicas answer at once, differently: exactly one wins.
      const answerOf = (text: string) => [
        { questionId: "db_choice", selectedOptionIds: ["opt-1"] },
        { questionId: "test_scope", selectedOptionIds: ["opt-0"], text }
      ]
      const [fromB, fromC] = await Promise.all([
        b!.command({
          type: "userInput.respond",
          promptId,
          answers: answerOf("from B") as never,
          clientRequestId: "b-1"
        }),
        c!.command({
          type: "userInput.respond",
          promptId,
          answers: answerOf("from C") as never,
          clientRequestId: "c-1"
        })
      ])
      const outcomes = [fromB!, fromC!].map((f) => (f.type === "result" ? "won" : f.error.code))
      expect(outcomes.sort()).toEqual(["already_resolved", "won"])
      const winner = fromB!.type === "result" ? "from B" : "from C"
      const loser = winner === "from B" ? "from C" : "from B"

      const done = await waitEvent(a!, "turn.completed", threadId)
      expect(done.event.payload).toMatchObject({ status: "completed" })
      await Promise.all([b!, c!].map((x) => waitEvent(x, "turn.completed", threadId)))
      // The thread shows the winner's answer, and the agent got exactly that one.
      const resolved = c!.frames.find(
        (f): f is EventFrame => f.type === "event" && f.event.type === "user-input.resolved"
      )!
      expect(JSON.stringify(resolved.event.payload)).toContain(winner)
      // Issue 29: A recorded who answered: a person on a WebSocket of another replica, relayed here.
      if (resolved.event.type !== "user-input.resolved") throw new Error("unreachable")
      const relayed = { actor: "user", via: "relay", relayedVia: "ws", replica: expect.any(String) }
      expect(resolved.event.payload.resolvedBy).toEqual(relayed)
      const request = c!.frames.find((f): f is EventFrame => f.type === "event" && f.event.type === "request.resolved")!
      if (request.event.type !== "request.resolved") throw new Error("unreachable")
      expect(request.event.payload.resolvedBy).toEqual(resolved.event.payload.resolvedBy)
      const outputs = JSON.stringify(mock.responseRequests().map((r) => functionCallOutputs(r)))
      expect(outputs).toContain(winner)
      expect(outputs).not.toContain(loser)
      // A retry of the winning answer on the third replica gets the stored outcome, nothing sent again.
      const winnerId = winner === "from B" ? "b-1" : "c-1"
      const retry = await a!.command({
        type: "userInput.respond",
        promptId,
        answers: answerOf(winner) as never,
        clientRequestId: winnerId
      })
      expect(resultOf(retry)).toEqual({ promptId, status: "resolved" })

      // Every client, on every replica, saw the same events in the same gap-free order.
      expect(seen(b!)).toEqual(seen(a!))
      expect(seen(c!)).toEqual(seen(a!))
      expectGapFree(a!.frames.filter((f): f is EventFrame => f.type === "event" && f.threadId === threadId))
    } finally {
      await Promise.all([a!.close(), b!.close(), c!.close()])
    }
  })

  it(`the answer race, ${RACE_ROUNDS} rounds: two clients on two replicas (owner and not, or two non-owners) answer one question at once; one wins each time and the agent gets its answer`, async () => {
    const clients = await Promise.all(replicas.map((r) => client(r)))
    try {
      await subscribeAll(clients)
      const pairs = [
        [1, 2],
        [0, 1],
        [2, 0]
      ] as const
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const [i, j] = pairs[round % pairs.length]!
        const head = Math.max(...seen(clients[0]!).map(([seq]) => Number(seq)))
        mock.script({ output: [askTwoQuestions] }, { output: [{ type: "text", text: `Round ${round} noted.` }] })
        const before = mock.responseRequests().length
        resultOf(await clients[j]!.command({ type: "turn.start", threadId: threadId as never, text: `Round ${round}` }))
        const asked = await waitEvent(clients[0]!, "user-input.requested", threadId, head)
        if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
        const promptId = asked.event.payload.prompt.promptId
        const answer = (who: number) =>
          clients[who]!.command({
            type: "userInput.respond",
            promptId,
            answers: [
              { questionId: "db_choice", selectedOptionIds: ["opt-0"] },
              { questionId: "test_scope", selectedOptionIds: ["opt-1"], text: `round ${round} by replica ${who}` }
            ] as never,
            clientRequestId: `race-${round}-${who}`
          })
        const frames = await Promise.all([answer(i), answer(j)])
        const winners = frames.flatMap((f, k) => (f!.type === "result" ? [[i, j][k]!] : []))
        const losers = frames.flatMap((f) => (f!.type === "error" ? [f.error.code] : []))
        expect(winners).toHaveLength(1)
        expect(losers).toEqual(["already_resolved"])
        await waitEvent(clients[0]!, "turn.completed", threadId, head)
        // The model's next request carries the winner's answer, and only it.
        const outputs = JSON.stringify(functionCallOutputs(mock.responseRequests()[before + 1]!))
        expect(outputs).toContain(`round ${round} by replica ${winners[0]}`)
        expect(outputs).not.toContain(`round ${round} by replica ${winners[0] === i ? j : i}`)
      }
      const last = Number(seen(clients[0]!).at(-1)![0])
      await Promise.all(
        clients.map((c) =>
          c.waitFor((f): f is EventFrame => f.type === "event" && f.threadId === threadId && f.seq >= last)
        )
      )
      expect(seen(clients[1]!)).toEqual(seen(clients[0]!))
      expect(seen(clients[2]!)).toEqual(seen(clients[0]!))
    } finally {
      await Promise.all(clients.map((c) => c.close()))
    }
  })

  it("SIGKILL of the owner with a question pending: another replica closes it server_restarted within the lease bound, and thread.resume there continues", async () => {
    const [b, c] = await Promise.all([client(replicas[1]!), client(replicas[2]!)])
    try {
      await subscribeAll([b!, c!])
      const head = (await allEvents(replicas[2]!, threadId, 1)).at(-1)!.seq
      mock.script({ output: [askTwoQuestions] })
      resultOf(await c!.command({ type: "turn.start", threadId: threadId as never, text: "One more question?" }))
      await waitEvent(b!, "user-input.requested", threadId, head)

      const killedAt = Date.now()
      await sigkill(replicas[0]!)
      const closed = await waitEvent(b!, "user-input.resolved", threadId, head, 30_000)
      const tookMs = Date.now() - killedAt
      expect(closed.event.payload).toMatchObject({ resolution: "server_restarted" })
      // The lease expires within its time to live; another replica looks every third of it.
      expect(tookMs).toBeLessThan(LEASE_TTL_MS + LEASE_TTL_MS / 3 + 3_000)
      console.info(`owner SIGKILLed → prompt closed server_restarted on another replica after ${tookMs} ms`)
      const exited = await waitEvent(c!, "session.exited", threadId, head, 30_000)
      expect(exited.event.payload).toMatchObject({ exitKind: "server_restarted" })
      const interrupted = await waitEvent(c!, "turn.completed", threadId, head)
      expect(interrupted.event.payload).toMatchObject({ status: "interrupted" })

      // Nobody owns it now: a turn is refused with the way out, and B resumes it.
      const refused = errorOf(await c!.command({ type: "turn.start", threadId: threadId as never, text: "hello?" }))
      expect(refused.code).toBe("session_not_live")
      expect(resultOf(await b!.command({ type: "thread.resume", threadId: threadId as never }))).toEqual({
        threadId,
        resumed: true,
        resumedFrom: nativeThreadId
      })
      // C sees it live on B: a second resume there starts nothing.
      expect(resultOf(await c!.command({ type: "thread.resume", threadId: threadId as never }))).toEqual({
        threadId,
        resumed: false
      })
      mock.script({ output: [{ type: "text", text: "Continuing with SQLite." }] })
      const before = mock.responseRequests().length
      resultOf(await c!.command({ type: "turn.start", threadId: threadId as never, text: "Go on with step 1." }))
      const done = await waitEvent(b!, "turn.completed", threadId, exited.seq)
      expect(done.event.payload).toMatchObject({ status: "completed" })
      await waitEvent(c!, "turn.completed", threadId, exited.seq)
      // The agent kept its context: the new turn's request carries the first turn and the answer.
      const request = JSON.stringify(mock.responseRequests()[before]!.body.input)
      expect(request.includes(FIRST_TEXT)).toBe(true)
      expect(seen(b!)).toEqual(seen(c!))
    } finally {
      await Promise.all([b!.close(), c!.close()])
    }
    expectGapFree(await allEvents(replicas[1]!, threadId, 1))
  })
})
