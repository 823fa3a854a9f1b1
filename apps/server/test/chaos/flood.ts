import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { floodChunk, floodPrompt, type FloodReport } from "../provider/acp/flood.ts"
import { tempDir } from "./rig.ts"
import { connectLite, makeTextFold, type EventFrame } from "./wsLite.ts"

/**
 * The agent flood (issue 13, item 4): the scripted Cursor agent writes `count` small
 * `agent_message_chunk` updates as fast as it may, against a real server. Measured: whether
 * the turn completes, the ingest rate (events/s) over the first and the last 10 % of the
 * deltas, how far the agent got ahead of the server, the server's memory, and whether the
 * item's final text is exactly what was sent.
 */
export interface FloodFigures {
  readonly count: number
  readonly completed: boolean
  readonly durationMs: number
  /** Deltas per second over the first and the last 10 % of them, as the client received them. */
  readonly firstRate: number
  readonly lastRate: number
  /**
   * When the agent had written its last chunk: how many of them the client had not yet received
   * (read ahead by the server, in pipes, or not yet committed or sent). Undefined when the agent
   * did not report (no report file in its environment).
   */
  readonly aheadAtAgentDone: number | undefined
  /** The assistant item's stored text (the snapshot) equals the chunks sent, in order. */
  readonly textWhole: boolean
  /** The text a client folds from the events it received equals it too. */
  readonly streamWhole: boolean
  /** Server memory: resident at the start of the turn and its peak growth (bytes), when measured. */
  readonly rssStart: number | undefined
  readonly rssPeakGrowth: number | undefined
  /** Server memory growth (bytes) once 10 %, 20 %, … of the deltas had arrived: flat, or growing with the message? */
  readonly rssByTenth: ReadonlyArray<number>
}

export interface FloodOptions {
  readonly url: string
  readonly token: string
  readonly count: number
  /** The file named by the agent's `SCRIPTED_CURSOR_FLOOD_REPORT`, if it has one. */
  readonly reportFile?: string
  /** The server's resident memory now (sampled every 100 ms during the turn). */
  readonly rss?: () => number | undefined
  readonly timeoutMs?: number
}

const rate = (times: Float64Array, from: number, to: number): number => {
  const span = (times[to - 1] ?? 0) - (times[from] ?? 0)
  return span <= 0 ? Number.POSITIVE_INFINITY : ((to - from - 1) / span) * 1000
}

export const expectedFloodText = (count: number): string => {
  const parts: Array<string> = []
  for (let i = 0; i < count; i++) parts.push(floodChunk(i))
  return parts.join("")
}

export const runFlood = async (options: FloodOptions): Promise<FloodFigures> => {
  const { count } = options
  const client = await connectLite(options.url, options.token)
  try {
    const cwd = tempDir("planbridge-chaos-flood-cwd-")
    const session = await client.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })
    const threadId = String(session.threadId)
    const times = new Float64Array(count)
    const rssByTenth: Array<number> = []
    // The server's memory with the session up, before the flood.
    const rssStart = options.rss?.()
    let deltaCount = 0
    const fold = makeTextFold()
    let done: (completed: boolean) => void = () => {}
    const finished = new Promise<boolean>((resolve) => (done = resolve))
    let turnId: string | undefined
    client.onEvent((frame: EventFrame) => {
      if (frame.threadId !== threadId) return
      const { event } = frame
      fold.apply(frame)
      if (event.type === "content.delta" && event.payload.streamKind === "assistant_text") {
        if (deltaCount < count) times[deltaCount] = performance.now()
        deltaCount += 1
        if (deltaCount % Math.max(1, Math.floor(count / 10)) === 0 && rssByTenth.length < 10) {
          rssByTenth.push((options.rss?.() ?? 0) - (rssStart ?? 0))
        }
      } else if (event.type === "turn.completed" && (turnId === undefined || event.turnId === turnId)) {
        done(event.payload.status === "completed")
      }
    })
    await client.command({ type: "thread.subscribe", threadId: threadId as never })

    let rssPeak = rssStart ?? 0
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, options.rss?.() ?? 0)
    }, 100)
    const started = performance.now()
    let agentDoneAt: number | undefined
    const reportWatch = setInterval(() => {
      if (agentDoneAt !== undefined || options.reportFile === undefined || !existsSync(options.reportFile)) return
      try {
        const report = JSON.parse(readFileSync(options.reportFile, "utf8")) as FloodReport
        // The agent's clock is this machine's: convert its wall time to this process's timeline.
        agentDoneAt = performance.now() - (Date.now() - report.wroteAtMs)
      } catch {
        // Being written; the next look reads it.
      }
    }, 20)
    try {
      const turn = await client.command({ type: "turn.start", threadId: threadId as never, text: floodPrompt(count) })
      turnId = String(turn.turnId)
      const timeoutMs = options.timeoutMs ?? 60_000 + count * 5
      const timedOut = new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs))
      const completed = await Promise.race([finished, timedOut])
      const durationMs = performance.now() - started
      rssPeak = Math.max(rssPeak, options.rss?.() ?? 0)
      const tenth = Math.max(2, Math.floor(count / 10))
      const received = Math.min(deltaCount, count)
      const aheadAtAgentDone =
        agentDoneAt === undefined ? undefined : count - times.filter((t, i) => i < received && t <= agentDoneAt!).length
      const expected = expectedFloodText(count)
      const headers = { authorization: `Bearer ${options.token}` }
      const res = await fetch(`${options.url}/api/threads/${threadId}`, { headers })
      const snapshot = (await res.json()) as { items: ReadonlyArray<{ itemType: string; text: string }> }
      const stored = snapshot.items
        .filter((i) => i.itemType === "assistant_message")
        .map((i) => i.text)
        .join("")
      return {
        count,
        completed,
        durationMs,
        firstRate: received >= count ? rate(times, 0, tenth) : 0,
        lastRate: received >= count ? rate(times, count - tenth, count) : 0,
        aheadAtAgentDone,
        textWhole: stored === expected,
        streamWhole: fold.text() === expected,
        rssStart,
        rssPeakGrowth: rssStart === undefined ? undefined : rssPeak - rssStart,
        rssByTenth
      }
    } finally {
      clearInterval(sampler)
      clearInterval(reportWatch)
    }
  } finally {
    await client.close()
  }
}

/** A fresh report file path for the agent's `SCRIPTED_CURSOR_FLOOD_REPORT`. */
export const floodReportFile = (): string => join(tempDir("planbridge-chaos-flood-"), "report.json")

export const describeFlood = (f: FloodFigures): string =>
  `flood: ${f.count} chunks, turn ${f.completed ? "completed" : "NOT completed"} ` +
  `in ${(f.durationMs / 1000).toFixed(1)} s; ` +
  `ingest ${f.firstRate.toFixed(0)} events/s (first 10 %) vs ${f.lastRate.toFixed(0)} events/s (last 10 %); ` +
  (f.aheadAtAgentDone === undefined ? "" : `agent ahead by ${f.aheadAtAgentDone} chunks when it finished writing; `) +
  (f.rssPeakGrowth === undefined
    ? ""
    : `server RSS ${(f.rssStart! / 2 ** 20).toFixed(0)} MB at start, ` +
      `peak growth ${(f.rssPeakGrowth / 2 ** 20).toFixed(0)} MB ` +
      `(growth at each tenth of the deltas: ${f.rssByTenth.map((b) => (b / 2 ** 20).toFixed(0)).join(", ")} MB); `) +
  `stored text ${f.textWhole ? "whole" : "NOT whole"}, streamed text ${f.streamWhole ? "whole" : "NOT whole"}`
