import type { RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { claudeReplayMapping } from "../../../src/provider/claude/ClaudeReplay.ts"
import { replay } from "../../../src/provider/kernel/replay.ts"
import { EmitError } from "../../../src/provider/ProviderAdapter.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { withoutEnvelope } from "../codex/realPeerSupport.ts"
import { startClaudeHarness, type ClaudeHarness } from "./harness.ts"

/**
 * Claude records the SDK messages waiting at once (a streamed reply: a message per 12-character
 * delta) as one burst, one `emitAll`, as Codex and ACP record their lines, instead of one
 * transaction per SDK message; the events and their order are those of mapping the messages one
 * by one (the replay of the transcript). When a burst cannot be recorded at once, each event goes
 * alone. Real Claude Code (Agent SDK 0.3.333) against the scripted model; the store is slowed
 * (each transaction 15 ms), as a loaded server's is, so that messages wait while one is recorded.
 */

beforeAll(() => assertLoopbackOnly())
const started = Date.now()
afterAll(() => {
  console.info(`claudeBursts.real.test.ts wall time: ${Date.now() - started} ms`)
})

const REPLY = Array.from({ length: 40 }, (_, i) => `Sentence ${i} of a long streamed reply.`).join(" ")
const slowly = Effect.sleep("15 millis")

/** The SDK messages a transaction carried events of (each message has its own `uuid`). */
const messagesIn = (transaction: ReadonlyArray<RuntimeEvent>) =>
  new Set(transaction.map((event) => JSON.stringify((event.raw?.payload as { uuid?: unknown } | null)?.uuid)))

/** One streamed turn; the turn's transactions and the SDK messages it mapped. */
const streamedTurn = async (h: ClaudeHarness) => {
  h.mock.script({ blocks: [{ type: "text", text: REPLY }] })
  const fromTransaction = h.transactions.length
  const fromLine = h.transcript.length
  await h.run(h.session.startTurn({ text: "Tell me a long story." }))
  await h.waitFor("turn.completed", { timeoutMs: 60_000 })
  // The line is in the transcript once its burst is committed, just after its events were emitted.
  const resultLine = () =>
    h.transcript.slice(fromLine).some((line) => "dir" in line && (line.msg as { type?: unknown }).type === "result")
  for (let waited = 0; !resultLine() && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20))
  const transactions = h.transactions.slice(fromTransaction)
  const messages = h.transcript.slice(fromLine).filter((line) => "dir" in line && line.dir === "in").length
  return { transactions, messages }
}

const replayed = (h: ClaudeHarness) =>
  Effect.runPromise(replay(claudeReplayMapping, h.transcript, { threadId: h.session.threadId }))

describe("Claude bursts on the real CLI", () => {
  it("records the SDK messages waiting at once in one transaction, in the order of the messages", async () => {
    const h = await startClaudeHarness({
      mode: "default",
      emit: () => slowly,
      emitAll: () => slowly
    })
    try {
      const { transactions, messages } = await streamedTurn(h)
      const multi = transactions.filter((t) => messagesIn(t).size > 1)
      console.info(
        `claude streamed turn: ${messages} SDK messages, ${transactions.length} transactions, ${multi.length} of them bursts of several messages`
      )
      expect(multi.length).toBeGreaterThan(0)
      expect(transactions.length).toBeLessThan(messages)
      expect(withoutEnvelope(h.events)).toEqual(withoutEnvelope(await replayed(h)))
      expect(h.events.filter((e) => e.type === "runtime.warning" || e.type === "runtime.error")).toEqual([])
    } finally {
      await h.close()
    }
  }, 120_000)

  it("records a burst that cannot be recorded at once event by event, each in order", async () => {
    const h = await startClaudeHarness({
      mode: "default",
      emit: () => slowly,
      emitAll: () => Effect.andThen(slowly, Effect.fail(new EmitError({ cause: new Error("the batch is refused") })))
    })
    try {
      const { transactions } = await streamedTurn(h)
      expect(transactions.every((t) => t.length === 1)).toBe(true)
      expect(withoutEnvelope(h.events)).toEqual(withoutEnvelope(await replayed(h)))
      expect(h.events.filter((e) => e.type === "runtime.warning" || e.type === "runtime.error")).toEqual([])
    } finally {
      await h.close()
    }
  }, 120_000)
})
