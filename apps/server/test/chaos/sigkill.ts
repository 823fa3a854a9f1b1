import {
  cursorServeEnv,
  killServe,
  processesCarrying,
  recordedGroupTokens,
  sleep,
  startServe,
  stopServe,
  tempDir,
  until,
  type ServeProcess
} from "./rig.ts"
import { connectLite, type EventFrame, type LiteClient } from "./wsLite.ts"

/**
 * SIGKILL cycles: `planbridge serve` with a Cursor session streaming to a subscribed client
 * (chunks, then a blocking question) is SIGKILLed at a random moment and restarted on the same
 * data dir, again and again. After each restart: every thread's sequence is gap-free, no event
 * id appears twice, every event the client saw before the kill is stored at the seq it was
 * sent with, no provider process of an earlier run is left (by its process-group token), and
 * what was pending is closed `server_restarted`.
 */
export interface SigkillFigures {
  readonly cycles: number
  /** Events the client had seen that were not stored (at the seq and with the id it saw). */
  readonly lost: number
  /** Event ids stored twice, and threads whose sequence had a gap. */
  readonly duplicated: number
  readonly gaps: number
  /** Provider processes of killed runs still alive after the restart (polled for 3 s). */
  readonly orphans: number
  /** Prompts open when the server died, and how many of them were closed `server_restarted`. */
  readonly promptsOpenAtKill: number
  readonly promptsClosedRestarted: number
  /** Turns still running at the kill, and sessions that were live: closed by the restart. */
  readonly unclosedTurns: number
  readonly liveAfterRestart: number
  /** Events the client saw in all (how much was checked). */
  readonly eventsSeen: number
  readonly msPerCycle: number
  /**
   * Where a cycle's time goes, on average (ms): the restart (until it listens), the checks, the
   * session start, the streaming until the kill.
   */
  readonly phases: {
    readonly restart: number
    readonly verify: number
    readonly session: number
    readonly stream: number
  }
  readonly failures: ReadonlyArray<string>
}

export interface SigkillOptions {
  readonly cycles: number
  /** Chunks each turn streams before its question (default 400). */
  readonly chunks?: number
  /** The kill comes uniformly within this many ms after `turn.start` returned (default 700). */
  readonly maxKillDelayMs?: number
  /** Deterministic kill moments. */
  readonly seed?: number
  readonly onCycle?: (done: number, figures: SigkillFigures) => void
}

interface Seen {
  readonly seq: number
  readonly eventId: string
}

/** What a cycle leaves to check after the restart. */
interface KilledRun {
  readonly threadId: string
  /** Every event frame the client got before the kill. */
  readonly seen: ReadonlyArray<Seen>
  /** Prompts the client saw open at the kill. */
  readonly openPrompts: ReadonlySet<string>
  /** The process-group tokens the killed run had recorded. */
  readonly tokens: ReadonlySet<string>
}

/** The thread's whole stored log, as a client gets it: `thread.subscribe` from seq 0. */
const readLog = async (client: LiteClient, threadId: string): Promise<ReadonlyArray<EventFrame>> => {
  const frames: Array<EventFrame> = []
  client.onEvent((frame) => {
    if (frame.threadId === threadId) frames.push(frame)
  })
  // The backlog is sent before the result.
  await client.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 })
  return frames
}

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

export const runSigkillCycles = async (options: SigkillOptions): Promise<SigkillFigures> => {
  const random = mulberry32(options.seed ?? 13)
  const chunks = options.chunks ?? 400
  const maxDelay = options.maxKillDelayMs ?? 700
  const dataDir = tempDir("planbridge-chaos-kill-")
  const env = await cursorServeEnv()
  const failures: Array<string> = []
  const counts = {
    lost: 0,
    duplicated: 0,
    gaps: 0,
    orphans: 0,
    promptsOpenAtKill: 0,
    promptsClosedRestarted: 0,
    unclosedTurns: 0,
    liveAfterRestart: 0,
    eventsSeen: 0
  }
  const allIds = new Set<string>()
  const phases = { restart: 0, verify: 0, session: 0, stream: 0 }
  /** Adds the time since the last mark to `phase`. */
  let mark = performance.now()
  const lap = (phase: keyof typeof phases) => {
    const now = performance.now()
    phases[phase] += now - mark
    mark = now
  }
  const fail = (cycle: number, what: string) => {
    if (failures.length < 50) failures.push(`cycle ${cycle}: ${what}`)
  }
  const figures = (done: number, started: number): SigkillFigures => ({
    cycles: done,
    ...counts,
    msPerCycle: done === 0 ? 0 : (performance.now() - started) / done,
    phases: {
      restart: phases.restart / Math.max(1, done),
      verify: phases.verify / Math.max(1, done),
      session: phases.session / Math.max(1, done),
      stream: phases.stream / Math.max(1, done)
    },
    failures
  })

  const started = performance.now()
  let server: ServeProcess = await startServe({ dataDir, env })
  let previous: KilledRun | undefined

  const verify = async (cycle: number) => {
    if (previous === undefined) return
    const { threadId, seen, openPrompts, tokens } = previous
    // Provider processes of the killed run: the watchdog or this start's recovery ended them.
    const leftovers = () => processesCarrying(tokens)
    if (!(await until(() => leftovers().length === 0, 3_000))) {
      counts.orphans += leftovers().length
      fail(cycle, `orphan provider processes ${leftovers().join(",")}`)
    }
    const client = await connectLite(server.url, server.token)
    try {
      const log = await readLog(client, threadId)
      const bySeq = new Map(log.map((f) => [f.seq, f.event.eventId]))
      // Gap-free: seq 1..n, each once.
      if (log.some((f, i) => f.seq !== i + 1)) {
        counts.gaps += 1
        fail(
          cycle,
          `thread ${threadId}: sequence ${log
            .map((f) => f.seq)
            .join(",")
            .slice(0, 200)} has a gap`
        )
      }
      const ids = new Set<string>()
      for (const frame of log) {
        if (ids.has(frame.event.eventId) || allIds.has(frame.event.eventId)) {
          counts.duplicated += 1
          fail(cycle, `event ${frame.event.eventId} stored twice`)
        }
        ids.add(frame.event.eventId)
      }
      ids.forEach((id) => allIds.add(id))
      for (const s of seen) {
        if (bySeq.get(s.seq) === s.eventId) continue
        counts.lost += 1
        fail(cycle, `event ${s.eventId} seen at seq ${s.seq} is not stored there (${bySeq.get(s.seq) ?? "nothing"})`)
      }
      // What was pending is closed by the restart, through ordinary events.
      const resolved = new Map<string, string>()
      let turnsOpen = 0
      let exited = false
      for (const { event } of log) {
        if (event.type === "user-input.resolved") {
          resolved.set(String(event.payload.promptId), String(event.payload.resolution))
        }
        if (event.type === "turn.started") turnsOpen += 1
        if (event.type === "turn.completed") turnsOpen -= 1
        if (event.type === "session.exited") exited = true
      }
      for (const promptId of openPrompts) {
        if (resolved.get(promptId) === "server_restarted") counts.promptsClosedRestarted += 1
        else fail(cycle, `prompt ${promptId}, open at the kill, is ${resolved.get(promptId) ?? "still pending"} now`)
      }
      if (turnsOpen !== 0) {
        counts.unclosedTurns += turnsOpen
        fail(cycle, `thread ${threadId}: ${turnsOpen} turns not closed after the restart`)
      }
      const listed = await client.command({ type: "threads.list" })
      const threads = listed.threads as ReadonlyArray<{ readonly threadId: string; readonly live: boolean }>
      if (!exited || threads.find((t) => t.threadId === threadId)?.live !== false) {
        counts.liveAfterRestart += 1
        fail(cycle, `thread ${threadId} still live after the restart`)
      }
    } finally {
      await client.close()
    }
  }

  try {
    for (let cycle = 1; cycle <= options.cycles; cycle++) {
      lap("restart")
      await verify(cycle)
      lap("verify")
      // A client streams a new session's turn: chunks, then a question that blocks it.
      const client = await connectLite(server.url, server.token)
      const seen: Array<Seen> = []
      const openPrompts = new Set<string>()
      let threadId = ""
      client.onEvent((frame) => {
        if (frame.threadId !== threadId) return
        seen.push({ seq: frame.seq, eventId: frame.event.eventId })
        const prompt = frame.event.payload.prompt as { readonly promptId?: string } | undefined
        if (frame.event.type === "user-input.requested" && prompt?.promptId !== undefined) {
          openPrompts.add(prompt.promptId)
        }
        if (frame.event.type === "user-input.resolved") openPrompts.delete(String(frame.event.payload.promptId))
      })
      const cwd = tempDir("planbridge-chaos-kill-cwd-")
      const session = await client.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })
      threadId = String(session.threadId)
      await client.command({ type: "thread.subscribe", threadId: threadId as never })
      const text = `SCENARIO:STREAM_ASK count=${chunks}`
      await client.command({ type: "turn.start", threadId: threadId as never, text })
      lap("session")
      await sleep(random() * maxDelay)
      // The tokens of this run's provider groups, as recorded before the session was reported.
      const tokens = new Set(recordedGroupTokens(dataDir))
      await killServe(server)
      await client.closed
      counts.eventsSeen += seen.length
      previous = { threadId, seen, openPrompts, tokens }
      counts.promptsOpenAtKill += openPrompts.size
      lap("stream")
      server = await startServe({ dataDir, env })
      options.onCycle?.(cycle, figures(cycle, started))
    }
    await verify(options.cycles + 1)
  } finally {
    await stopServe(server)
  }
  return figures(options.cycles, started)
}

export const describeSigkill = (f: SigkillFigures): string =>
  `sigkill: ${f.cycles} cycles (${(f.msPerCycle / 1000).toFixed(2)} s each), ` +
  `${f.eventsSeen} events seen by the client; ` +
  `lost ${f.lost}, duplicated ${f.duplicated}, gaps ${f.gaps}, orphans ${f.orphans}, ` +
  `prompts open at the kill ${f.promptsOpenAtKill} (closed server_restarted ${f.promptsClosedRestarted}), ` +
  `turns left open ${f.unclosedTurns}, sessions left live ${f.liveAfterRestart}; a cycle's time: ` +
  `restart ${f.phases.restart.toFixed(0)} ms, checks ${f.phases.verify.toFixed(0)} ms, ` +
  `session start ${f.phases.session.toFixed(0)} ms, streaming until the kill ${f.phases.stream.toFixed(0)} ms`

export const sigkillFailed = (f: SigkillFigures): boolean =>
  f.failures.length > 0 || f.lost + f.duplicated + f.gaps + f.orphans + f.unclosedTurns + f.liveAfterRestart > 0
