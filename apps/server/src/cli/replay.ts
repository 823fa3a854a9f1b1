import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { basename } from "node:path"
import { RuntimeIngestion } from "../orchestration/RuntimeIngestion.ts"
import { replayTranscript as replayAcp } from "../provider/acp/replay.ts"
import { replayTranscript as replayClaude } from "../provider/claude/replay.ts"
import { replayTranscript as replayCodex } from "../provider/codex/replay.ts"
import { parseCommandArgs, registerCommand } from "./main.ts"
import { runWithStore } from "./store.ts"

type Replayer = (lines: ReadonlyArray<unknown>, options: { threadId: ThreadId }) => Effect.Effect<ReadonlyArray<RuntimeEvent>, { readonly message: string; readonly line: number }>

/** The transcript's first line names the provider that recorded it. */
const replayerFor = (provider: string): Replayer | undefined => {
  if (provider === "codex") return replayCodex
  if (provider === "claude") return replayClaude
  if (provider === "cursor" || provider.startsWith("acp-")) return replayAcp
  return undefined
}

const fail = (message: string): number => {
  process.stderr.write(`planbridge replay: ${message}\n`)
  return 1
}

/**
 * `planbridge replay FILE [--thread-id ID] [--data-dir DIR]`: feeds a recorded transcript
 * through its provider's mapping, prints the canonical events as JSON lines, and with an
 * explicit `--data-dir` persists them there through the ordinary ingestion.
 */
registerCommand(
  "replay",
  async (args) => {
    const { values, positionals } = parseCommandArgs(args, { "thread-id": { type: "string" } })
    const [file] = positionals
    if (file === undefined || positionals.length > 1) return fail("usage: planbridge replay FILE [--thread-id ID] [--data-dir DIR]")
    let text: string
    try {
      text = readFileSync(file, "utf8")
    } catch (error) {
      return fail(`cannot read ${file}: ${(error as Error).message}`)
    }
    const lines: Array<unknown> = []
    for (const [index, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue
      try {
        lines.push(JSON.parse(line))
      } catch {
        return fail(`${file}:${index + 1}: not JSON`)
      }
    }
    const meta = lines[0] as { dir?: unknown; provider?: unknown } | undefined
    if (meta?.dir !== "meta" || typeof meta.provider !== "string") return fail(`${file}:1: the first line must be the transcript's meta line naming its provider`)
    const replay = replayerFor(meta.provider)
    if (replay === undefined) return fail(`${file}: no replayer for provider '${meta.provider}'`)
    const threadId = (values["thread-id"] ?? `replay-${basename(file).replace(/\.jsonl$/, "")}`) as ThreadId
    const replayed = await Effect.runPromiseExit(replay(lines, { threadId }))
    if (replayed._tag === "Failure") {
      const error = replayed.cause.toString()
      return fail(`${file}: ${error}`)
    }
    const events = replayed.value
    for (const event of events) process.stdout.write(`${JSON.stringify(event)}\n`)
    if (!args.some((a) => a === "--data-dir" || a.startsWith("--data-dir="))) return 0
    return runWithStore(
      values["data-dir"],
      Effect.gen(function* () {
        const receipts = yield* (yield* RuntimeIngestion).ingestAll(events)
        const fresh = receipts.filter((r) => !r.duplicate).length
        process.stderr.write(`persisted ${fresh} events (${receipts.length - fresh} already there) in ${values["data-dir"]}\n`)
        return 0
      })
    )
  },
  "replay a recorded transcript: print its canonical events, persist them with --data-dir"
)
