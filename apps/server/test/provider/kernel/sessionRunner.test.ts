import { ItemId, RequestId, ThreadId, TurnId, type RuntimeEvent } from "@planbridge/contracts"
import { Deferred, Effect, Fiber } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { AdapterError, EmitError } from "../../../src/provider/ProviderAdapter.ts"
import { makeSessionRunner, type Stepped } from "../../../src/provider/kernel/SessionRunner.ts"
import { makeSession } from "../../../src/provider/kernel/Session.ts"
import {
  noOpenRequests,
  withClosed,
  withOpened,
  type OpenRequest,
  type OpenRequests
} from "../../../src/provider/kernel/OpenRequests.ts"
import { rawOf, warningDraft } from "../../../src/provider/kernel/EventDraft.ts"
import { PROVIDER_LOG_LINES } from "../../../src/provider/logBudget.ts"

/**
 * The session runner's rules (issue 26), on a fake mapping: the state counts the lines, each
 * line `n` is one delta, and an odd line owes the provider a reply. Nothing is written before
 * its events are durable; a burst whose transaction fails goes one by one; a strict line whose
 * event cannot be recorded commits nothing and writes nothing; each event that cannot be
 * recorded is one runtime.error, and the rest still go out.
 */
type Line = number
const step = (state: number, n: Line): Stepped<number, string> => ({
  state: state + 1,
  drafts: [
    {
      type: "content.delta",
      turnId: TurnId.make("turn-1"),
      itemId: ItemId.make("item-1"),
      payload: { streamKind: "assistant_text", delta: `line ${n}` },
      raw: rawOf("fake", "delta", { n })
    }
  ],
  replies: n % 2 === 1 ? [`reply ${n}`] : []
})

const rig = (options: {
  readonly emitFails?: (event: RuntimeEvent) => boolean
  readonly emitAllFails?: boolean
  /** `emitAll` waits for it, after succeeding `entered`. */
  readonly gate?: { readonly entered: Deferred.Deferred<void>; readonly open: Deferred.Deferred<void> }
}) =>
  Effect.gen(function* () {
    const log: Array<string> = []
    const durable: Array<RuntimeEvent> = []
    /** The lines the runner committed to the transcript (its `record`). */
    const transcript: Array<Line> = []
    let seq = 0
    const runner = yield* makeSessionRunner<number, Line, string>({
      provider: "cursor",
      threadId: ThreadId.make("thread-runner"),
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
          if (options.gate !== undefined) {
            yield* Deferred.succeed(options.gate.entered, undefined)
            yield* Deferred.await(options.gate.open)
          }
          if (options.emitAllFails) return yield* Effect.fail(new EmitError({ cause: new Error("transaction failed") }))
          durable.push(...events)
          log.push(`durable ${events.length} together`)
        }),
      // Each write says which deltas were durable when it went out.
      write: (reply) => Effect.sync(() => log.push(`write ${reply} after ${deltas(durable).length} deltas`)),
      record: (line) => transcript.push(line)
    })
    return { runner, log, durable, transcript }
  })

const deltas = (events: ReadonlyArray<RuntimeEvent>) =>
  events.flatMap((e) => (e.type === "content.delta" ? [e.payload.delta] : []))
const errorsOf = (events: ReadonlyArray<RuntimeEvent>) =>
  events.flatMap((e) => (e.type === "runtime.error" ? [e.payload] : []))
const writes = (log: ReadonlyArray<string>) => log.filter((l) => l.startsWith("write"))
const lines = Array.from({ length: 20 }, (_, i) => i + 1)
const odd = lines.filter((n) => n % 2 === 1)

afterEach(() => {
  vi.restoreAllMocks()
})

describe("the session runner", () => {
  it("writes nothing to the provider before the burst's events are durable, then every reply in order", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const gate = { entered: yield* Deferred.make<void>(), open: yield* Deferred.make<void>() }
        const { runner, log, durable, transcript } = yield* rig({ gate })
        const fiber = yield* Effect.forkChild(runner.applyAll(lines))
        // The burst is being recorded (its transaction is open): nothing written, nothing committed.
        yield* Deferred.await(gate.entered)
        expect(log).toEqual([])
        expect(runner.peek()).toBe(0)
        expect(transcript).toEqual([])
        yield* Deferred.succeed(gate.open, undefined)
        yield* Fiber.join(fiber)
        expect(log).toEqual(["durable 20 together", ...odd.map((n) => `write reply ${n} after 20 deltas`)])
        expect(deltas(durable)).toEqual(lines.map((n) => `line ${n}`))
        expect(runner.peek()).toBe(20)
        expect(transcript).toEqual(lines)
      })
    )
  })

  it("writes a single line's reply only after its event is durable", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { runner, log } = yield* rig({})
        expect(yield* runner.apply(1)).toBe(true)
        expect(log).toEqual(["durable content.delta", "write reply 1 after 1 deltas"])
      })
    )
  })

  it("records a burst one by one when its transaction fails, in order, none lost", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { runner, log, durable } = yield* rig({ emitAllFails: true })
        yield* runner.applyAll(lines)
        expect(deltas(durable)).toEqual(lines.map((n) => `line ${n}`))
        expect(errorsOf(durable)).toEqual([])
        // Each line's reply right after its own event, not after the whole burst.
        expect(writes(log)).toEqual(odd.map((n) => `write reply ${n} after ${n} deltas`))
        expect(runner.peek()).toBe(20)
      })
    )
  })

  it("commits nothing, writes nothing and fails a strict line whose event cannot be recorded", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        let refuse = true
        const { runner, log, durable, transcript } = yield* rig({
          emitFails: (e) => refuse && e.type === "content.delta"
        })
        const failure = yield* Effect.flip(runner.apply(1, { strict: true }))
        expect(failure).toBeInstanceOf(AdapterError)
        expect(failure.message).toContain("could not record content.delta; nothing was sent")
        expect(writes(log)).toEqual([])
        expect(runner.peek()).toBe(0)
        expect(transcript).toEqual([])
        expect(errorsOf(durable).map((e) => e.message)).toEqual(["could not record content.delta; nothing was sent"])
        // The next line maps from the state before the refused one.
        refuse = false
        expect(yield* runner.apply(2, { strict: true })).toBe(true)
        expect(runner.peek()).toBe(1)
        expect(transcript).toEqual([2])
      })
    )
  })

  it("reports each event it could not record as one runtime.error, and goes on", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const failing = new Set(["line 3", "line 8"])
        const { runner, durable, log } = yield* rig({
          emitFails: (e) => e.type === "content.delta" && failing.has(e.payload.delta),
          emitAllFails: true
        })
        // The lines whose events were not all recorded, for the session to act on (ACP cancels their requests).
        expect(yield* runner.applyAll(lines)).toEqual([3, 8])
        const errors = errorsOf(durable)
        expect(errors.map((e) => e.code)).toEqual(["cursor.emit_failed", "cursor.emit_failed"])
        // Each names the event it lost (a burst's events are stamped in order before any is emitted).
        expect(errors.map((e) => e.message)).toEqual([
          "could not record content.delta e-3",
          "could not record content.delta e-8"
        ])
        expect(deltas(durable)).toEqual(lines.filter((n) => !failing.has(`line ${n}`)).map((n) => `line ${n}`))
        // What the provider did happened regardless: every reply is still written, the state committed.
        expect(writes(log)).toHaveLength(odd.length)
        expect(runner.peek()).toBe(20)
      })
    )
  })

  it(`logs a session's runtime.warning events, at most ${PROVIDER_LOG_LINES} lines a minute, every one recorded`, async () => {
    const logged: Array<string> = []
    for (const method of ["log", "info", "warn", "error", "debug"] as const)
      vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => {
        logged.push(args.map(String).join(" "))
      })
    await Effect.runPromise(
      Effect.gen(function* () {
        const durable: Array<RuntimeEvent> = []
        const runner = yield* makeSessionRunner<number, Line, string>({
          provider: "codex",
          threadId: ThreadId.make("thread-warnings"),
          initial: 0,
          step: (state, n) => ({
            state: state + 1,
            drafts: [warningDraft("fake.odd_line", `line ${n} is odd`, rawOf("fake", "odd", { n }))],
            replies: []
          }),
          eventId: () => `w-${durable.length + 1}`,
          emit: (event) => Effect.sync(() => void durable.push(event)),
          write: () => Effect.void
        })
        yield* runner.applyAll(lines)
        expect(durable.filter((e) => e.type === "runtime.warning")).toHaveLength(lines.length)
      })
    )
    const warnings = logged.filter((l) => l.includes("codex: fake.odd_line: line "))
    expect(warnings).toHaveLength(PROVIDER_LOG_LINES)
    expect(logged).toHaveLength(PROVIDER_LOG_LINES)
  })
})

/**
 * The kernel's `Session` on the runner (issue 26), on a fake mapping of a provider that asks
 * questions: `ask k` opens request k, `reply k` (ours) answers it and owes the provider the
 * reply, `exit` closes every request. An answer is applied once, strictly; the exit once.
 */
type FakeLine = { readonly kind: "ask" | "reply"; readonly key: string } | { readonly kind: "exit" }
type FakeState = { readonly open: OpenRequests<OpenRequest> }
const request = (key: string): OpenRequest => ({
  key,
  kind: "approval",
  requestId: RequestId.make(`request-${key}`),
  turnId: "turn-1",
  blocking: false,
  answered: false
})
const fakeStep = ({ open }: FakeState, line: FakeLine): Stepped<FakeState, string> => {
  const raw = rawOf("fake", line.kind, line)
  const draft = (message: string) => warningDraft(`fake.${line.kind}`, message, raw)
  if (line.kind === "ask")
    return { state: { open: withOpened(open, request(line.key)) }, drafts: [draft(line.key)], replies: [] }
  if (line.kind === "reply")
    return { state: { open: withClosed(open, line.key) }, drafts: [draft(line.key)], replies: [`answer ${line.key}`] }
  return { state: { open: noOpenRequests() }, drafts: [draft(`${open.size} open`)], replies: [] }
}

const sessionRig = (emitFails: (event: RuntimeEvent) => boolean = () => false) =>
  Effect.gen(function* () {
    const durable: Array<RuntimeEvent> = []
    const written: Array<string> = []
    let seq = 0
    const session = yield* makeSession<FakeState, FakeLine, string>({
      provider: "cursor",
      threadId: ThreadId.make("thread-session"),
      initial: { open: noOpenRequests() },
      step: fakeStep,
      eventId: () => `s-${++seq}`,
      emit: (event) =>
        emitFails(event)
          ? Effect.fail(new EmitError({ cause: new Error("store refused") }))
          : Effect.sync(() => void durable.push(event)),
      write: (reply) => Effect.sync(() => void written.push(`${reply} after ${durable.length} events`)),
      isExit: (line) => line.kind === "exit",
      openRequests: (state) => state.open
    })
    const messages = () => durable.map((e) => (e.type === "runtime.warning" ? e.payload.message : e.type))
    return { session, durable, written, messages }
  })

describe("the kernel session", () => {
  it("applies an answer once, and only after its event is durable", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { session, written, messages } = yield* sessionRig()
        yield* session.applyAll([{ kind: "ask", key: "a" }])
        const a = session.peek().open.get("a")!
        yield* session.answer(a, { kind: "reply", key: "a" })
        // The same answer again (a second client, a retry): refused in the request's own terms.
        const again = yield* Effect.flip(session.answer(a, { kind: "reply", key: "a" }))
        expect(again.reason._tag).toBe("RequestNotPending")
        expect(written).toEqual(["answer a after 2 events"])
        expect(messages()).toEqual(["a", "a"])
      })
    )
  })

  it("rolls a strict answer back when its event cannot be recorded: nothing written, the request still open", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        let refuse = true
        const { session, written, durable } = yield* sessionRig(
          (e) => refuse && e.type === "runtime.warning" && e.payload.code === "fake.reply"
        )
        yield* session.apply({ kind: "ask", key: "b" })
        const b = session.peek().open.get("b")!
        const failure = yield* Effect.flip(session.answer(b, { kind: "reply", key: "b" }))
        expect(failure.message).toContain("could not record runtime.warning; nothing was sent")
        expect(written).toEqual([])
        expect(session.peek().open.has("b")).toBe(true)
        // One runtime.error for the one event that failed.
        expect(errorsOf(durable).map((e) => e.code)).toEqual(["cursor.emit_failed"])
        refuse = false
        yield* session.answer(b, { kind: "reply", key: "b" })
        expect(written).toEqual(["answer b after 3 events"])
      })
    )
  })

  it("maps the exit once, however often it is offered, and answers nothing after it", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { session, written, messages } = yield* sessionRig()
        yield* session.applyAll([{ kind: "ask", key: "c" }, { kind: "exit" }])
        expect(session.exited()).toBe(true)
        // A finalizer offering the exit again maps nothing.
        expect((yield* Effect.flip(session.apply({ kind: "exit" }))).kind).toBe("provider_exited")
        expect(yield* session.applyAll([{ kind: "exit" }])).toEqual([])
        const c = request("c")
        expect((yield* Effect.flip(session.answer(c, { kind: "reply", key: "c" }))).reason._tag).toBe(
          "RequestNotPending"
        )
        expect(messages()).toEqual(["c", "1 open"])
        expect(written).toEqual([])
      })
    )
  })
})
