import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Deferred, Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { EmitError } from "../../../src/provider/ProviderAdapter.ts"
import { makeSessionRunner, type Stepped } from "../../../src/provider/kernel/SessionRunner.ts"
import { rawOf } from "../../../src/provider/kernel/EventDraft.ts"

/**
 * The session runner's rules (issue 26), on a fake mapping: each line `n` is one delta, and an
 * odd line owes the provider a reply. Nothing is written before its events are durable; a burst
 * whose transaction fails goes one by one; a strict line whose event cannot be recorded is
 * rolled back with nothing written; each event that cannot be recorded is one runtime.error.
 */
type Line = number
const step = (state: number, n: Line): Stepped<number, string> => ({
  state: state + 1,
  drafts: [
    {
      type: "content.delta",
      turnId: "turn-1" as never,
      itemId: "item-1" as never,
      payload: { streamKind: "assistant_text", delta: `line ${n}` },
      raw: rawOf("fake", "delta", { n })
    }
  ],
  replies: n % 2 === 1 ? [`reply ${n}`] : []
})

const rig = (options: {
  emitFails?: (e: RuntimeEvent) => boolean
  emitAllFails?: boolean
  gate?: Deferred.Deferred<void>
}) =>
  Effect.gen(function* () {
    const log: Array<string> = []
    const durable: Array<RuntimeEvent> = []
    let seq = 0
    const runner = yield* makeSessionRunner<number, Line, string>({
      provider: "cursor",
      threadId: "thread-runner" as ThreadId,
      initial: 0,
      step,
      eventId: () => `e-${++seq}`,
      emit: (event) =>
        options.emitFails?.(event)
          ? Effect.fail(new EmitError({ cause: new Error("store refused") }))
          : Effect.sync(() => {
              durable.push(event)
              log.push(`durable ${event.type}`)
            }),
      emitAll: (events) =>
        Effect.gen(function* () {
          if (options.gate !== undefined) yield* Deferred.await(options.gate)
          if (options.emitAllFails) return yield* Effect.fail(new EmitError({ cause: new Error("transaction failed") }))
          durable.push(...events)
          log.push(`durable ${events.length} together`)
        }),
      write: (reply) => Effect.sync(() => log.push(`write ${reply}`))
    })
    return { runner, log, durable }
  })

const deltas = (events: ReadonlyArray<RuntimeEvent>) =>
  events.flatMap((e) => (e.type === "content.delta" ? [e.payload.delta] : []))
const lines = Array.from({ length: 20 }, (_, i) => i + 1)

describe("the session runner", () => {
  it("writes nothing to the provider before the burst's events are durable, then every reply in order", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const { runner, log, durable } = yield* rig({ gate })
        const fiber = yield* Effect.forkChild(runner.applyAll(lines, () => ({})))
        yield* Effect.yieldNow
        expect(log).toEqual([])
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(fiber)
        expect(log[0]).toBe("durable 20 together")
        expect(log.slice(1)).toEqual(lines.filter((n) => n % 2 === 1).map((n) => `write reply ${n}`))
        expect(deltas(durable)).toEqual(lines.map((n) => `line ${n}`))
        expect(runner.peek()).toBe(20)
      })
    )
  })

  it("records a burst one by one when its transaction fails, in order, none lost", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { runner, log, durable } = yield* rig({ emitAllFails: true })
        yield* runner.applyAll(lines, () => ({}))
        expect(deltas(durable)).toEqual(lines.map((n) => `line ${n}`))
        // Each line's reply after its own event.
        expect(log.indexOf("write reply 1")).toBeGreaterThan(log.indexOf("durable content.delta"))
        expect(log.filter((l) => l.startsWith("write"))).toHaveLength(10)
      })
    )
  })

  it("rolls a strict line back, writes nothing and fails when its event cannot be recorded", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { runner, log } = yield* rig({ emitFails: (e) => e.type === "content.delta" })
        let rolledBack = 0
        const result = yield* Effect.result(runner.apply(1, { strict: { rollback: () => rolledBack++ } }))
        expect(result._tag).toBe("Failure")
        expect(rolledBack).toBe(1)
        expect(log.filter((l) => l.startsWith("write"))).toEqual([])
        expect(runner.peek()).toBe(0)
      })
    )
  })

  it("reports each event it could not record as one runtime.error, and goes on", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const failing = (e: RuntimeEvent) => e.type === "content.delta" && e.payload.delta === "line 3"
        const { runner, durable, log } = yield* rig({ emitFails: failing, emitAllFails: true })
        yield* runner.applyAll(lines, () => ({}))
        const errors = durable.filter((e) => e.type === "runtime.error")
        expect(errors).toHaveLength(1)
        expect(errors[0]!.type === "runtime.error" && errors[0]!.payload.code).toBe("cursor.emit_failed")
        expect(deltas(durable)).toEqual(lines.filter((n) => n !== 3).map((n) => `line ${n}`))
        // What the provider did happened regardless: its line's reply is still written.
        expect(log.filter((l) => l.startsWith("write"))).toHaveLength(10)
      })
    )
  })
})
