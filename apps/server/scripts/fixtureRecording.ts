import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { isDeepStrictEqual } from "node:util"
import { formatTranscript, parseTranscriptText } from "../src/cli/transcriptFile.ts"
import { replayerFor } from "../src/provider/replay/replayers.ts"

/**
 * The one recorder's output step, for every provider's `record-*-fixtures` profile: a recorded
 * transcript (the kernel's one format) is written as `fixtures/<dir>/<name>.jsonl`, replayed by
 * the kernel's `replay` from that very text, checked against the live session's events (up to
 * ids and times), and the replay written as the golden `<name>.events.jsonl`.
 */

const FIXTURES = resolve(fileURLToPath(new URL("../../../fixtures/", import.meta.url)))

const strip = ({ eventId: _id, createdAt: _at, ...rest }: RuntimeEvent) => rest

const replayTranscript = async (name: string, text: string, threadId: ThreadId) => {
  const parsed = parseTranscriptText(text)
  if ("notJson" in parsed) throw new Error(`${name}: line ${parsed.notJson} is not JSON`)
  const provider = (parsed.lines[0] as { readonly provider?: unknown } | undefined)?.provider
  const replayer = typeof provider === "string" ? replayerFor(provider) : undefined
  if (replayer === undefined) throw new Error(`${name}: no replayer for provider ${String(provider)}`)
  return Effect.runPromise(replayer(parsed.lines, { threadId }))
}

/**
 * A committed transcript's golden written again from its replay, the transcript untouched: for a
 * mapping change (a new canonical event, a capability), where the native lines are the same. The
 * thread id is the one the golden already holds (each provider's tests name theirs).
 */
export const rewriteGolden = async (dir: string, name: string): Promise<"unchanged" | "rewritten"> => {
  const goldenPath = join(FIXTURES, dir, `${name}.events.jsonl`)
  const golden = parseTranscriptText(readFileSync(goldenPath, "utf8"))
  if ("notJson" in golden) throw new Error(`${name}: golden line ${golden.notJson} is not JSON`)
  const { threadId } = golden.lines[0] as { readonly threadId: ThreadId }
  const events = await replayTranscript(name, readFileSync(join(FIXTURES, dir, `${name}.jsonl`), "utf8"), threadId)
  // Same events (key order aside): the file stays byte for byte as it is.
  if (isDeepStrictEqual(golden.lines, JSON.parse(JSON.stringify(events)))) return "unchanged"
  writeFileSync(goldenPath, formatTranscript(events))
  return "rewritten"
}

export const saveFixture = async (input: {
  readonly dir: string
  readonly name: string
  readonly threadId: ThreadId
  readonly lines: ReadonlyArray<unknown>
  /** What the live session emitted: the replay must equal it. */
  readonly live: ReadonlyArray<RuntimeEvent>
  /** Rewrites machine-specific text (temp paths) before the transcript is written. */
  readonly anonymise?: (text: string) => string
}): Promise<void> => {
  const replayText = (text: string) => replayTranscript(input.name, text, input.threadId)
  // The recorded text as recorded replays to the live events; the written (anonymised) text is the golden's.
  const recorded = formatTranscript(input.lines)
  const live = JSON.parse(JSON.stringify(input.live.map(strip))) as ReadonlyArray<unknown>
  const replayed = JSON.parse(JSON.stringify((await replayText(recorded)).map(strip))) as ReadonlyArray<unknown>
  if (!isDeepStrictEqual(live, replayed)) {
    const at = live.findIndex((e, i) => !isDeepStrictEqual(e, replayed[i]))
    throw new Error(
      `${input.name}: replay differs from the live session at event ${at}:\nlive   ${JSON.stringify(live[at])}\nreplay ${JSON.stringify(replayed[at])}`
    )
  }
  const text = (input.anonymise ?? ((t: string) => t))(recorded)
  const events = await replayText(text)
  const outDir = join(FIXTURES, input.dir)
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, `${input.name}.jsonl`), text)
  writeFileSync(join(outDir, `${input.name}.events.jsonl`), formatTranscript(events))
  console.log(`${input.dir}/${input.name}: ${input.lines.length} lines, ${events.length} events, replay = live`)
}

/** Every committed fixture of `dir`, by name (its transcript, not its golden). */
export const fixtureNames = (dir: string): ReadonlyArray<string> =>
  readdirSync(join(FIXTURES, dir))
    .filter((file) => file.endsWith(".jsonl") && !file.endsWith(".events.jsonl"))
    .map((file) => file.replace(/\.jsonl$/, ""))
