import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { isExit, type CodexLine } from "../../src/provider/codex/CodexLine.ts"
import { makeCodexTransport } from "../../src/provider/codex/CodexTransport.ts"
import {
  INBOUND_QUEUE_BYTES,
  INBOUND_QUEUE_LINES,
  makeFlowProbe,
  readLinesPaced,
  type PacedReaderOptions
} from "../../src/provider/inbound.ts"
import { makeLineSplitter, type ProviderLine } from "../../src/provider/lines.ts"

const isExitInput = (input: CodexLine | undefined) => input !== undefined && isExit(input)

/**
 * Issue 13, item 4: a provider's stdout used to be read into an unbounded queue, however far
 * ingestion was behind. Now at most `INBOUND_QUEUE_LINES` lines (and `INBOUND_QUEUE_BYTES`)
 * wait for the session; beyond that the transport stops reading and the provider's own writes
 * block. Each stand-in writes far more than a pipe holds and says on stderr when it is done.
 */

/** Writes `count` lines made by `line(i)` (an expression of `i`), honouring backpressure; then `done` on stderr. */
const writer = (count: number, line: string) => `
  let i = 0
  const next = () => {
    while (i < ${count}) {
      const ok = process.stdout.write(${line} + "\\n")
      i += 1
      if (!ok) return process.stdout.once("drain", next)
    }
    process.stdout.end(() => process.stderr.write("done"))
  }
  next()`

const spawnWriter = (script: string): ChildProcessWithoutNullStreams & { readonly stderrText: () => string } => {
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "pipe"] })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  return Object.assign(child, { stderrText: () => stderr })
}

const until = async (condition: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  return condition()
}
/** Long enough for a writer that is not held back to have written everything. */
const settle = () => new Promise((r) => setTimeout(r, 300))

interface Taken {
  readonly line: ProviderLine
  readonly release: () => void
}

const reader = (stream: PacedReaderOptions["stream"], extra: Partial<PacedReaderOptions> = {}) => {
  const taken: Array<Taken> = []
  const tooLong: Array<ProviderLine> = []
  let ended = false
  const probe = makeFlowProbe()
  const paced = readLinesPaced({
    stream,
    probe,
    onTooLong: (line) => tooLong.push(line),
    onLine: (line, release) => taken.push({ line, release }),
    onEnd: () => {
      ended = true
    },
    ...extra
  })
  /** Releases everything handed on so far, until the end (a session taking lines up). */
  const drain = async () => {
    let released = 0
    while (!ended) {
      while (released < taken.length) taken[released++]!.release()
      await new Promise((r) => setImmediate(r))
    }
    taken.slice(released).forEach((t) => t.release())
  }
  return { paced, taken, tooLong, probe, ended: () => ended, drain }
}

describe("the bounded inbound queue (readLinesPaced)", () => {
  const title = `stops reading at ${INBOUND_QUEUE_LINES} unreleased lines, the writer blocks; then every line in order`
  it(title, async () => {
    const count = 20_000
    const child = spawnWriter(writer(count, '"line-" + i'))
    const r = reader(child.stdout)
    expect(await until(() => r.paced.queued() === INBOUND_QUEUE_LINES)).toBe(true)
    await settle()
    // Exactly the bound waits; the rest is held back in the pipe, and the child cannot finish.
    expect(r.paced.queued()).toBe(INBOUND_QUEUE_LINES)
    expect(r.taken).toHaveLength(INBOUND_QUEUE_LINES)
    expect(r.paced.held()).toBeLessThanOrEqual(64 * 1024)
    expect(child.stderrText()).toBe("")
    expect(r.probe.pauses).toBe(1)

    await r.drain()
    const expected = Array.from({ length: count }, (_, i) => `line-${i}`)
    expect(r.taken.map((t) => t.line.data.toString("utf8"))).toEqual(expected)
    expect(r.probe.highWaterLines).toBe(INBOUND_QUEUE_LINES)
    expect(await until(() => child.stderrText() === "done")).toBe(true)
  })

  it(`stops at ${INBOUND_QUEUE_BYTES / 1024 / 1024} MiB of unreleased lines, however few they are`, async () => {
    const mib = 1024 * 1024
    const child = spawnWriter(writer(40, `String(i).padEnd(${mib}, "x")`))
    const r = reader(child.stdout)
    expect(await until(() => r.paced.queued() > 0 && r.probe.pauses > 0)).toBe(true)
    await settle()
    expect(r.paced.queued()).toBe(INBOUND_QUEUE_BYTES / mib)
    expect(child.stderrText()).toBe("")
    await r.drain()
    expect(r.taken).toHaveLength(40)
    expect(r.probe.highWaterBytes).toBeLessThanOrEqual(INBOUND_QUEUE_BYTES)
    expect(await until(() => child.stderrText() === "done")).toBe(true)
  })

  it("a line over the bound is reported at once, even with the queue full, then in order; nothing after", async () => {
    // 300 short lines, then one of 5000 bytes and one more line, all in one write.
    const child = spawnWriter(`
      const lines = Array.from({ length: 300 }, (_, i) => "short-" + i)
      process.stdout.end([...lines, "y".repeat(5000), "after", ""].join("\\n"), () => process.stderr.write("done"))`)
    const r = reader(child.stdout, { splitter: makeLineSplitter(1024, 16), maxLineBytes: 1024 })
    expect(await until(() => r.tooLong.length === 1)).toBe(true)
    // Found while the queue was full (the session had taken nothing): reported before its turn.
    expect(r.paced.queued()).toBe(INBOUND_QUEUE_LINES)
    expect(r.tooLong[0]).toMatchObject({ bytes: 5000 })
    await r.drain()
    const texts = r.taken.map((t) => [t.line.data.toString("utf8"), t.line.bytes] as const)
    expect(texts.slice(0, 300)).toEqual(Array.from({ length: 300 }, (_, i) => [`short-${i}`, `short-${i}`.length]))
    expect(texts.slice(300)).toEqual([["y".repeat(16), 5000]])
  })
})

describe("Codex transport: reading waits for the session", () => {
  const title = `a child writing 20,000 notifications: ≤ ${INBOUND_QUEUE_LINES} wait untaken; then all, in order`
  it(title, async () => {
    const count = 20_000
    const probe = makeFlowProbe()
    const script = writer(count, 'JSON.stringify({ method: "item/agentMessage/delta", params: { i } })')
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const env = { PATH: process.env.PATH ?? "" }
          const command = { command: process.execPath, args: ["-e", script], env, cwd: process.cwd() }
          const t = yield* makeCodexTransport({ ...command, probe })
          // Nothing taken: the transport reads up to its bound and stops; the child waits.
          yield* Effect.promise(() => until(() => probe.pauses > 0))
          yield* Effect.promise(settle)
          const whileStalled = { stderr: t.stderr(), highWater: probe.highWaterLines }
          const inputs: Array<CodexLine> = []
          while (!isExitInput(inputs.at(-1))) inputs.push(yield* t.take)
          return { whileStalled, inputs, stderr: t.stderr() }
        })
      )
    )
    expect(result.whileStalled).toEqual({ stderr: "", highWater: INBOUND_QUEUE_LINES })
    const ids = result.inputs.flatMap((i) => (i.dir === "in" ? [(i.msg as { params: { i: number } }).params.i] : []))
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => i))
    expect(result.inputs.at(-1)).toMatchObject({ dir: "local", msg: { kind: "exit", code: 0 } })
    expect(result.stderr).toBe("done")
    expect(probe.highWaterLines).toBe(INBOUND_QUEUE_LINES)
  })

  it("a burst taken at once keeps its places in the bound until it is released", async () => {
    const count = 5_000
    const probe = makeFlowProbe()
    const script = writer(count, 'JSON.stringify({ method: "item/agentMessage/delta", params: { i } })')
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const env = { PATH: process.env.PATH ?? "" }
          const command = { command: process.execPath, args: ["-e", script], env, cwd: process.cwd() }
          const t = yield* makeCodexTransport({ ...command, probe })
          yield* Effect.promise(() => until(() => probe.pauses > 0))
          // The whole queue at once: taken, not yet recorded, so reading stays paused.
          const first = yield* t.takeAvailable
          yield* Effect.promise(settle)
          const whileHeld = { taken: first.length, read: probe.lines, pauses: probe.pauses, stderr: t.stderr() }
          first.forEach((b) => b.release())
          const inputs: Array<CodexLine> = first.map((b) => b.line)
          const sizes: Array<number> = []
          while (!isExitInput(inputs.at(-1))) {
            const burst = yield* t.takeAvailable
            sizes.push(burst.length)
            burst.forEach((b) => b.release())
            inputs.push(...burst.map((b) => b.line))
          }
          return { whileHeld, inputs, sizes }
        })
      )
    )
    expect(result.whileHeld).toEqual({ taken: INBOUND_QUEUE_LINES, read: INBOUND_QUEUE_LINES, pauses: 1, stderr: "" })
    const ids = result.inputs.flatMap((i) => (i.dir === "in" ? [(i.msg as { params: { i: number } }).params.i] : []))
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => i))
    expect(Math.max(...result.sizes)).toBeLessThanOrEqual(INBOUND_QUEUE_LINES + 1)
    expect(probe.highWaterLines).toBe(INBOUND_QUEUE_LINES)
  })
})
