import { ThreadId, type RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { EventStore } from "../persistence/EventStore.ts"
import { EVENT_LOG_PROVIDER } from "../provider/replay/EventLogReplay.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { withStore } from "./store.ts"
import { formatTranscript } from "./transcriptFile.ts"

export interface RecordInput {
  readonly threadId: string
  readonly out: string | undefined
  readonly dataDir: string
  readonly store: string | undefined
}

/** Events read from the log per page. */
const PAGE = 1_000
/** A recording holds at most this many events (`serve --replay` bounds a transcript's size too). */
export const MAX_RECORDED_EVENTS = 100_000

/**
 * The event as a recording keeps it: no `raw` (the native message may carry what the provider
 * read: files, its environment), and no envelope the replay draws again (id, thread, time).
 * Secret answers are already redacted in the log: they were before they were stored.
 */
const recorded = ({ raw: _raw, eventId: _id, threadId: _thread, createdAt: _at, ...rest }: RuntimeEvent) => rest

/**
 * `planbridge record THREAD [--out FILE]`: a thread of the data dir's event log — a session run
 * against a real provider, say — as a transcript in the fixtures' format, which `serve --replay`
 * offers and `planbridge replay` replays.
 */
export const record = (input: RecordInput) =>
  withStore(
    { dataDir: input.dataDir, store: input.store },
    Effect.gen(function* () {
      const io = yield* Io
      const store = yield* EventStore
      const threadId = ThreadId.make(input.threadId)
      const events: Array<RuntimeEvent> = []
      for (;;) {
        const page = yield* store.readThread(threadId, events.length, PAGE)
        events.push(...page.map((stored) => stored.event))
        if (page.length < PAGE) break
        if (events.length > MAX_RECORDED_EVENTS) {
          io.err(`planbridge record: thread '${threadId}' has over ${MAX_RECORDED_EVENTS} events\n`)
          return ExitCode.failed
        }
      }
      const first = events[0]
      if (first === undefined) {
        io.err(`planbridge record: no thread '${threadId}' in the log\n`)
        return ExitCode.failed
      }
      const startedAt = Date.parse(first.createdAt)
      const meta = {
        dir: "meta",
        provider: EVENT_LOG_PROVIDER,
        recordedProvider: first.provider,
        recordedThread: threadId,
        startedAt: first.createdAt
      }
      const lines = events.map((event) => ({
        t: Date.parse(event.createdAt) - startedAt,
        dir: "in",
        msg: recorded(event)
      }))
      const text = formatTranscript([meta, ...lines])
      if (input.out === undefined) io.out(text)
      else {
        mkdirSync(dirname(input.out), { recursive: true })
        writeFileSync(input.out, text, { mode: 0o600 })
        io.err(`recorded ${events.length} events of thread '${threadId}' in ${input.out}\n`)
      }
      return ExitCode.ok
    })
  )
