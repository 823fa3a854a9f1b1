import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
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
  const replayText = async (text: string) => {
    const parsed = parseTranscriptText(text)
    if ("notJson" in parsed) throw new Error(`${input.name}: line ${parsed.notJson} is not JSON`)
    const provider = (parsed.lines[0] as { readonly provider?: unknown } | undefined)?.provider
    const replayer = typeof provider === "string" ? replayerFor(provider) : undefined
    if (replayer === undefined) throw new Error(`${input.name}: no replayer for provider ${String(provider)}`)
    return Effect.runPromise(replayer(parsed.lines, { threadId: input.threadId }))
  }
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
