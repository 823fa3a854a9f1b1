import { MAX_LINE_BYTES } from "../../src/provider/lines.ts"
import { openRaw, statusOf, upgradeRequest } from "../support/rawHttp.ts"
import { openFds, peakRssOf, rssOf, tempDir, type ServeProcess } from "./rig.ts"
import { connectLite, makeTextFold, type EventFrame, type LiteClient, type ReplyFrame } from "./wsLite.ts"
import { badFrame } from "../support/badFrames.ts"

/**
 * The chaos checks at the edges, each against a running `planbridge serve` (see rig.ts), each
 * returning its figures and what failed. They scale up tests that run in `npm test`:
 * ws/lineBound.test.ts (a line over the line bound), ws/eventSize.test.ts (an event over the
 * event bound), ws/badInput.test.ts (malformed frames), ws/fdLeak.test.ts (refused upgrades).
 */
export interface CheckResult {
  readonly name: string
  readonly figures: string
  readonly failures: ReadonlyArray<string>
}

const MiB = 1024 * 1024

/** Starts a Cursor session with a turn, collecting the thread's events; resolves at `until`. */
const turnOf = async (
  client: LiteClient,
  text: string,
  until: (frame: EventFrame) => boolean,
  timeoutMs: number
): Promise<{ readonly threadId: string; readonly frames: ReadonlyArray<EventFrame> }> => {
  const threadId = await startSession(client)
  const frames: Array<EventFrame> = []
  let done: () => void = () => {}
  const reached = new Promise<void>((resolve) => (done = resolve))
  client.onEvent((frame) => {
    if (frame.threadId !== threadId) return
    frames.push(frame)
    if (until(frame)) done()
  })
  await client.command({ type: "thread.subscribe", threadId: threadId as never })
  await client.command({ type: "turn.start", threadId: threadId as never, text })
  await Promise.race([reached, new Promise((r) => setTimeout(r, timeoutMs))])
  return { threadId, frames }
}

const mb = (bytes: number | undefined) => (bytes === undefined ? "?" : `${(bytes / MiB).toFixed(0)} MB`)

/** A new Cursor session's thread id. */
const startSession = async (client: LiteClient): Promise<string> => {
  const cwd = tempDir("planbridge-chaos-edge-cwd-")
  return String((await client.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })).threadId)
}

/** A 33 MiB line (a permission request the agent then waits on): the session must end, not hang. */
export const hugeLineCheck = async (server: ServeProcess): Promise<CheckResult> => {
  const failures: Array<string> = []
  const client = await connectLite(server.url, server.token)
  const rssBefore = rssOf(server.pid)
  const started = performance.now()
  try {
    const exitedOnce = (f: EventFrame) => f.event.type === "session.exited"
    const { threadId, frames } = await turnOf(client, "SCENARIO:HUGE_REQUEST", exitedOnce, 30_000)
    const ms = performance.now() - started
    const error = frames.find((f) => f.event.type === "runtime.error")?.event
    const completed = frames.find((f) => f.event.type === "turn.completed")?.event
    const exited = frames.find((f) => f.event.type === "session.exited")?.event
    const { code, fatal, message } = error?.payload ?? {}
    if (code !== "line_too_long" || fatal !== true) {
      failures.push(`no fatal line_too_long (${JSON.stringify(error?.payload)})`)
    }
    if (!String(message ?? "").includes(`${MAX_LINE_BYTES} bytes`)) failures.push("the error does not name the bound")
    const status = completed?.payload.status
    if (status !== "failed") failures.push(`the turn is ${String(status)}, not failed`)
    const exitKind = exited?.payload.exitKind
    if (exitKind !== "crashed") failures.push(`the session exited ${String(exitKind)}, not crashed`)
    const again = await client.reply({ type: "turn.start", threadId: threadId as never, text: "again" })
    if (again.type !== "error" || again.error?.code !== "session_not_live") {
      failures.push("the thread still takes turns")
    }
    const peak = peakRssOf(server.pid)
    return {
      name: "huge line",
      figures:
        `a ${(MAX_LINE_BYTES + MiB) / MiB} MiB agent line: line_too_long, turn failed, session crashed ` +
        `in ${(ms / 1000).toFixed(1)} s; ` +
        `server RSS ${mb(rssBefore)} before, peak ${mb(peak)}`,
      failures
    }
  } finally {
    await client.close()
  }
}

/** One 24 MiB agent chunk (one event far over the 1 MiB event bound): ten subscribers get it whole. */
export const hugeEventCheck = async (server: ServeProcess, mebibytes = 24, subscribers = 10): Promise<CheckResult> => {
  const failures: Array<string> = []
  const main = await connectLite(server.url, server.token)
  const others: Array<LiteClient> = []
  const rssBefore = rssOf(server.pid)
  const started = performance.now()
  try {
    const threadId = await startSession(main)
    const folds: Array<ReturnType<typeof makeTextFold>> = []
    let deltas = 0
    const closes: Array<number> = []
    const finished: Array<Promise<void>> = []
    for (let i = 0; i < subscribers; i++) {
      const client = i === 0 ? main : await connectLite(server.url, server.token)
      if (i > 0) others.push(client)
      void client.closed.then((code) => closes.push(code))
      const fold = makeTextFold()
      folds.push(fold)
      finished.push(
        new Promise<void>((resolve) =>
          client.onEvent((frame) => {
            if (frame.threadId !== threadId) return
            fold.apply(frame)
            if (i === 0 && frame.event.type === "content.delta") deltas += 1
            if (frame.event.type === "turn.completed") resolve()
          })
        )
      )
      await client.command({ type: "thread.subscribe", threadId: threadId as never })
    }
    const text = `SCENARIO:HUGE_CHUNK count=${mebibytes}`
    await main.command({ type: "turn.start", threadId: threadId as never, text })
    await Promise.race([Promise.all(finished), new Promise((r) => setTimeout(r, 60_000))])
    const ms = performance.now() - started
    const expected = "z".repeat(mebibytes * MiB) + "After the huge chunk."
    const whole = folds.filter((fold) => fold.text() === expected).length
    if (whole !== subscribers) {
      failures.push(`${subscribers - whole} of ${subscribers} subscribers did not get the whole text`)
    }
    if (closes.length > 0) failures.push(`subscribers closed: ${closes.join(",")}`)
    const headers = { authorization: `Bearer ${server.token}` }
    const res = await fetch(`${server.url}/api/threads/${threadId}`, { headers })
    const snapshot = (await res.json()) as { items: ReadonlyArray<{ itemType: string; text: string }> }
    const stored = snapshot.items
      .filter((i) => i.itemType === "assistant_message")
      .map((i) => i.text)
      .join("")
    if (stored !== expected) failures.push(`stored text is ${stored.length} characters, not ${expected.length}`)
    return {
      name: "huge event",
      figures:
        `a ${mebibytes} MiB agent chunk: ${deltas} deltas of at most 1 MiB (the chunk and the completed item, ` +
        `split), ` +
        `text whole at ${whole}/${subscribers} subscribers and in the store, ` +
        `${closes.length} closed, ${(ms / 1000).toFixed(1)} s; ` +
        `server RSS ${mb(rssBefore)} before, peak ${mb(peakRssOf(server.pid))}`,
      failures
    }
  } finally {
    await Promise.all([main, ...others].map((c) => c.close()))
  }
}

export const badFramesCheck = async (server: ServeProcess, count: number): Promise<CheckResult> => {
  const failures: Array<string> = []
  const client = await connectLite(server.url, server.token)
  const rssBefore = rssOf(server.pid)
  try {
    const errors: Array<ReplyFrame> = []
    const collect = (frame: ReplyFrame) => errors.push(frame)
    client.onError(collect)
    // Frames with an id come back through `command`'s bookkeeping only for our own ids; these
    // ids are not ours, so every answer lands in `onError` (or is a result, which is a failure).
    const results: Array<unknown> = []
    client.socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { type: string; id?: string | null }
      if (frame.type === "result" && typeof frame.id === "string" && frame.id.startsWith("bad-")) results.push(frame)
    })
    const started = performance.now()
    for (let i = 0; i < count; i++) {
      client.sendRaw(badFrame(i, i))
      // Let the socket drain now and then rather than queue megabytes in this process.
      if (i % 500 === 499) await new Promise((r) => setImmediate(r))
    }
    const deadline = Date.now() + 60_000
    while (errors.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    const ms = performance.now() - started
    const codes = new Map<string, number>()
    for (const e of errors) codes.set(e.error?.code ?? "?", (codes.get(e.error?.code ?? "?") ?? 0) + 1)
    if (errors.length !== count) failures.push(`${errors.length} typed errors for ${count} frames`)
    if (results.length > 0) failures.push(`${results.length} bad frames got a result`)
    if (errors.some((e) => e.error === undefined || e.error.code.length === 0)) {
      failures.push("an error frame without a code")
    }
    const stillServed = await client.reply({ type: "threads.list" })
    if (stillServed.type !== "result") failures.push("the connection no longer serves commands")
    return {
      name: "malformed frames",
      figures:
        `${count} malformed frames: ${errors.length} typed errors in ${(ms / 1000).toFixed(1)} s ` +
        `(${[...codes].map(([code, n]) => `${code} ${n}`).join(", ")}); connection still served; ` +
        `server RSS ${mb(rssBefore)} before, ${mb(rssOf(server.pid))} after`,
      failures
    }
  } finally {
    await client.close()
  }
}

/** Refused upgrades under a low descriptor limit: every socket is freed, a client is still served. */
export const fdProbeCheck = async (server: ServeProcess, fdLimit: number, refusals: number): Promise<CheckResult> => {
  const failures: Array<string> = []
  const start = openFds(server.pid)
  let peak = start
  const kinds = [
    (i: number) => upgradeRequest(server.port, `/not-ws/${i}`),
    (i: number) => upgradeRequest(server.port, `/api/threads?n=${i}`),
    (i: number) => upgradeRequest(server.port, `/api/threads?n=${i}`, { authorization: `Bearer ${server.token}` }),
    () => upgradeRequest(server.port, "/ws", { origin: "https://evil.example" })
  ]
  const statuses = new Map<number, number>()
  const started = performance.now()
  for (let batch = 0; batch < refusals; batch += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, refusals - batch) }, async (_, k) => {
        const i = batch + k
        const raw = await openRaw(server.port, kinds[i % kinds.length]!(i))
        const status = statusOf(await raw.head)
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        raw.socket.end()
      })
    )
    peak = Math.max(peak, openFds(server.pid))
  }
  const deadline = Date.now() + 5_000
  while (openFds(server.pid) > start && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  const end = openFds(server.pid)
  const ms = performance.now() - started
  if (end > start) failures.push(`descriptors ${start} at start, ${end} at the end`)
  const unexpected = [...statuses.keys()].filter((s) => s !== 403 && s !== 404)
  if (unexpected.length > 0) failures.push(`statuses ${unexpected.join(",")}`)
  const client = await connectLite(server.url, server.token)
  try {
    if ((await client.reply({ type: "threads.list" })).type !== "result") failures.push("no client served afterwards")
  } finally {
    await client.close()
  }
  return {
    name: "descriptor leak",
    figures:
      `${refusals} refused upgrades under ulimit -n ${fdLimit} in ${(ms / 1000).toFixed(1)} s ` +
      `(${[...statuses].map(([s, n]) => `${s} ×${n}`).join(", ")}): ` +
      `descriptors ${start} at start, peak ${peak}, ${end} at the end; a client served afterwards`,
    failures
  }
}
