import type { ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { basename } from "node:path"
import { RuntimeIngestion } from "../orchestration/RuntimeIngestion.ts"
import { replayerFor } from "../provider/replay/replayers.ts"
import { parseTranscriptText } from "./transcriptFile.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { redactUrl } from "../persistence/postgres/StoreUrl.ts"
import { DEFAULT_DATA_DIR } from "./flags.ts"
import { withStore } from "./store.ts"

export interface ReplayInput {
  readonly file: string
  readonly threadId: string | undefined
  /** Only an explicit `--data-dir` or `--store` persists: replaying is a dry look at a transcript otherwise. */
  readonly dataDir: string | undefined
  /** `--store URL` (PostgreSQL); PLANBRIDGE_STORE does not make a replay persist, only says where when it does. */
  readonly store: string | undefined
}

/** The transcript's lines as JSON values, or the message naming the first line that is not JSON. */
const readTranscript = (file: string): { readonly lines: ReadonlyArray<unknown> } | { readonly error: string } => {
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (error) {
    return { error: `cannot read ${file}: ${(error as Error).message}` }
  }
  const parsed = parseTranscriptText(text)
  return "notJson" in parsed ? { error: `${file}:${parsed.notJson}: not JSON` } : parsed
}

/**
 * `planbridge replay FILE [--thread-id ID] [--data-dir DIR]`: feeds a recorded transcript
 * through its provider's mapping, prints the canonical events as JSON lines, and with an
 * explicit `--data-dir` persists them there through the ordinary ingestion.
 */
export const replay = (input: ReplayInput) =>
  Effect.gen(function* () {
    const io = yield* Io
    const fail = (message: string) => {
      io.err(`planbridge replay: ${message}\n`)
      return ExitCode.failed
    }
    const { file } = input
    const read = readTranscript(file)
    if ("error" in read) return fail(read.error)
    const meta = read.lines[0] as { dir?: unknown; provider?: unknown } | undefined
    if (meta?.dir !== "meta" || typeof meta.provider !== "string") {
      return fail(`${file}:1: the first line must be the transcript's meta line naming its provider`)
    }
    const replayer = replayerFor(meta.provider)
    if (replayer === undefined) return fail(`${file}: no replayer for provider '${meta.provider}'`)
    const threadId = (input.threadId ?? `replay-${basename(file).replace(/\.jsonl$/, "")}`) as ThreadId
    const replayed = yield* Effect.exit(replayer(read.lines, { threadId }))
    if (replayed._tag === "Failure") return fail(`${file}: ${replayed.cause.toString()}`)
    const events = replayed.value
    for (const event of events) io.out(`${JSON.stringify(event)}\n`)
    const { dataDir, store } = input
    if (dataDir === undefined && store === undefined) return ExitCode.ok
    const where = store === undefined ? dataDir : redactUrl(store)
    return yield* withStore(
      { dataDir: dataDir ?? DEFAULT_DATA_DIR, store },
      Effect.gen(function* () {
        const receipts = yield* (yield* RuntimeIngestion).ingestAll(events)
        const fresh = receipts.filter((r) => !r.duplicate).length
        io.err(`persisted ${fresh} events (${receipts.length - fresh} already there) in ${where}\n`)
        return ExitCode.ok
      })
    )
  })
