import pg from "pg"
import { floodChunk, floodPrompt } from "../provider/acp/flood.ts"
import type { TestPostgres } from "../support/postgres.ts"
import { cursorServeEnv, sleep, startServe, stopServe, tempDir, type ServeProcess } from "./rig.ts"
import { connectLite, type EventFrame, type LiteClient } from "./wsLite.ts"

/**
 * PostgreSQL restarts under streaming load (issue 31, items 2 and 3): `planbridge serve` on a
 * PostgreSQL store (a replica) streams a Cursor agent's flood of chunks, one turn per restart,
 * and the cluster is restarted (`pg_ctl restart -m MODE`) while the turn streams. Counted: the
 * server's exits (it must survive its database going away), and per turn the chunks the agent
 * sent that are not in the thread's log (its `content.delta` events, in order): none may be
 * missing, and no `emit_failed` error may stand in for them.
 */
export interface PgRestartFigures {
  readonly restarts: number
  /** Restarts that began while the turn was still streaming (not yet `turn.completed`). */
  readonly underLoad: number
  /** How long the restarts took (pg_ctl restart, until it accepted connections), ms. */
  readonly awayMs: { readonly min: number; readonly max: number }
  /** `planbridge serve` exits (each was started again to go on). */
  readonly serverExits: number
  readonly chunksSent: number
  /** Chunks of the turns' floods not in the log's deltas (by their index). */
  readonly chunksMissing: number
  /** Turns whose deltas are not exactly the flood, in order (missing, repeated or reordered). */
  readonly turnsNotWhole: number
  /** Turns that did not complete within the time allowed. */
  readonly turnsIncomplete: number
  /** `runtime.error` events `<provider>.emit_failed` in the log. */
  readonly emitFailed: number
  readonly failures: ReadonlyArray<string>
}

export interface PgRestartOptions {
  readonly postgres: TestPostgres
  /** A database of the cluster for this run (a fresh name). */
  readonly database: string
  readonly restarts: number
  readonly mode?: "immediate" | "fast"
  /** Chunks each turn's flood has (default 20,000): enough to stream through a restart. */
  readonly chunks?: number
  /** The restart comes uniformly within this many ms after the turn's first delta (default 300). */
  readonly maxDelayMs?: number
  readonly seed?: number
  readonly onRestart?: (done: number, figures: PgRestartFigures) => void
}

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** A thread's events as the store holds them, in thread order, read from PostgreSQL itself. */
const readLog = async (url: string, threadId: string): Promise<ReadonlyArray<EventFrame["event"]>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ event: string }>(
      "select event from events where thread_id = $1 order by thread_seq",
      [threadId]
    )
    return rows.map((row) => JSON.parse(row.event) as EventFrame["event"])
  } finally {
    await client.end()
  }
}

/** A turn's flood against what its deltas in the log hold: the indices missing, and whether it is exact. */
const checkTurn = (log: ReadonlyArray<EventFrame["event"]>, turnId: string, chunks: number) => {
  // The live deltas only: the item's whole text comes again at its end, in pieces of an event
  // over the size bound (ids `<id>#<n>`, EVENTS.md "Limits"), from the adapter's own state,
  // which has every chunk whether it was recorded or not.
  const text = log
    .filter(
      (e) =>
        e.turnId === turnId &&
        e.type === "content.delta" &&
        e.payload.streamKind === "assistant_text" &&
        !e.eventId.includes("#")
    )
    .map((e) => String(e.payload.delta))
    .join("")
  const present = new Set<number>()
  for (const line of text.split("\n")) {
    const index = /^(\d{6}) /.exec(line)?.[1]
    if (index !== undefined) present.add(Number(index))
  }
  let missing = 0
  for (let i = 0; i < chunks; i++) if (!present.has(i)) missing += 1
  let expected = ""
  for (let i = 0; i < chunks; i++) expected += floodChunk(i)
  let at = 0
  while (at < text.length && text[at] === expected[at]) at++
  const detail =
    text === expected
      ? ""
      : `${text.length} characters against ${expected.length}; first difference at ${at}: ` +
        `${JSON.stringify(text.slice(at, at + 80))} where ${JSON.stringify(expected.slice(at, at + 80))}`
  return { missing, whole: text === expected, detail }
}

export const runPgRestarts = async (options: PgRestartOptions): Promise<PgRestartFigures> => {
  const random = mulberry32(options.seed ?? 31)
  const chunks = options.chunks ?? 20_000
  const maxDelay = options.maxDelayMs ?? 300
  const mode = options.mode ?? "immediate"
  const url = await options.postgres.createDatabase(options.database)
  const dataDir = tempDir("planbridge-chaos-pg-")
  const env = await cursorServeEnv({ PLANBRIDGE_STORE: url })
  const failures: Array<string> = []
  const counts = { underLoad: 0, serverExits: 0, chunksSent: 0, turnsIncomplete: 0 }
  const away: Array<number> = []
  /** The turns to check at the end, by thread. */
  const turns: Array<{ readonly threadId: string; readonly turnId: string }> = []
  const fail = (what: string) => {
    if (failures.length < 50) failures.push(what)
  }

  let server: ServeProcess = await startServe({ dataDir, env })
  let exited = false
  /** Our own stop at the end is no exit to count. */
  let stopping = false
  const watch = (s: ServeProcess) =>
    void s.exited.then(({ code, signal }) => {
      if (s !== server || stopping) return
      exited = true
      counts.serverExits += 1
      fail(`serve exited (${code ?? signal}): ${s.stderr().slice(-600)}`)
    })
  watch(server)
  let client: LiteClient | undefined
  let threadId = ""
  let completedTurns = new Set<string>()
  let firstDelta: (() => void) | undefined

  /** A client and a session on the (new) server. */
  const openSession = async () => {
    client = await connectLite(server.url, server.token)
    completedTurns = new Set()
    client.onEvent((frame) => {
      if (frame.threadId !== threadId) return
      if (frame.event.type === "content.delta") firstDelta?.()
      if (frame.event.type === "turn.completed" && frame.event.turnId !== undefined)
        completedTurns.add(frame.event.turnId)
    })
    const cwd = tempDir("planbridge-chaos-pg-cwd-")
    const session = await client.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })
    threadId = String(session.threadId)
    await client.command({ type: "thread.subscribe", threadId: threadId as never })
  }

  const figures = (done: number, chunksMissing = 0, turnsNotWhole = 0, emitFailed = 0): PgRestartFigures => ({
    restarts: done,
    underLoad: counts.underLoad,
    awayMs: { min: away.length === 0 ? 0 : Math.min(...away), max: away.length === 0 ? 0 : Math.max(...away) },
    serverExits: counts.serverExits,
    chunksSent: counts.chunksSent,
    chunksMissing,
    turnsNotWhole,
    turnsIncomplete: counts.turnsIncomplete,
    emitFailed,
    failures
  })

  try {
    await openSession()
    for (let restart = 1; restart <= options.restarts; restart++) {
      if (exited) {
        exited = false
        server = await startServe({ dataDir, env })
        watch(server)
        await openSession()
      }
      const streaming = new Promise<void>((resolve) => (firstDelta = resolve))
      const turn = await client!.command({ type: "turn.start", threadId: threadId as never, text: floodPrompt(chunks) })
      const turnId = String(turn.turnId)
      turns.push({ threadId, turnId })
      counts.chunksSent += chunks
      await Promise.race([streaming, sleep(10_000)])
      firstDelta = undefined
      await sleep(random() * maxDelay)
      if (!completedTurns.has(turnId)) counts.underLoad += 1
      const started = performance.now()
      await options.postgres.restart(mode)
      away.push(performance.now() - started)
      // The turn goes on once the database is back (or the server died: then it cannot).
      const deadline = Date.now() + 60_000 + chunks * 2
      while (!completedTurns.has(turnId) && !exited && Date.now() < deadline) await sleep(50)
      if (!completedTurns.has(turnId)) {
        counts.turnsIncomplete += 1
        fail(`restart ${restart}: turn ${turnId} did not complete${exited ? " (the server exited)" : ""}`)
      }
      options.onRestart?.(restart, figures(restart))
    }
    if (exited) {
      server = await startServe({ dataDir, env })
      watch(server)
    }
    // What the log holds, turn by turn, read from a fresh connection.
    let chunksMissing = 0
    let turnsNotWhole = 0
    let emitFailed = 0
    const logs = new Map<string, ReadonlyArray<EventFrame["event"]>>()
    for (const { threadId: thread } of turns) if (!logs.has(thread)) logs.set(thread, await readLog(url, thread))
    for (const log of logs.values())
      emitFailed += log.filter(
        (e) => e.type === "runtime.error" && String(e.payload.code).endsWith(".emit_failed")
      ).length
    for (const { threadId: thread, turnId } of turns) {
      const { missing, whole, detail } = checkTurn(logs.get(thread)!, turnId, chunks)
      chunksMissing += missing
      if (!whole) {
        turnsNotWhole += 1
        fail(`turn ${turnId}: its deltas are not the flood (${missing} chunks missing): ${detail}`)
      }
    }
    return figures(options.restarts, chunksMissing, turnsNotWhole, emitFailed)
  } finally {
    await client?.close().catch(() => undefined)
    stopping = true
    await stopServe(server)
  }
}

export const describePgRestarts = (f: PgRestartFigures, mode = "immediate"): string =>
  `pg restarts: ${f.restarts} × -m ${mode} (${f.underLoad} while a turn streamed; ` +
  `${f.awayMs.min.toFixed(0)}-${f.awayMs.max.toFixed(0)} ms each), ${f.chunksSent} chunks sent; ` +
  `serve exits ${f.serverExits}, chunks missing ${f.chunksMissing}, turns not whole ${f.turnsNotWhole}, ` +
  `turns incomplete ${f.turnsIncomplete}, emit_failed errors ${f.emitFailed}`

export const pgRestartsFailed = (f: PgRestartFigures): boolean =>
  f.failures.length > 0 || f.serverExits + f.chunksMissing + f.turnsNotWhole + f.turnsIncomplete + f.emitFailed > 0
