import { Schema } from "effect"

/**
 * The one transcript format, for every provider (`fixtures/<provider>/*.jsonl`): one JSON
 * object per line. The first line is the meta line, `{"dir":"meta","provider","startedAt",…}`
 * (the provider's own facts beside them: versions, initial mode, id prefix). Every further
 * line is `{"t","dir","msg"}`, `t` the milliseconds since `startedAt`:
 *  - `in`: a native message the provider sent us, as it was on the wire;
 *  - `out`: a native message we sent the provider (requests, our replies to its requests);
 *  - `local`: what happened on our side and is no wire message, `{"kind",…}` — a decision, an
 *    SDK callback, a line we could not read, the process exit. Its kinds belong to the provider.
 * Lines are in the order the session mapped them, so a replay maps them in the same order.
 */

export const TranscriptMeta = Schema.StructWithRest(
  Schema.Struct({ dir: Schema.Literal("meta"), provider: Schema.String, startedAt: Schema.String }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type TranscriptMeta = typeof TranscriptMeta.Type

export const TranscriptLine = Schema.Struct({
  t: Schema.Finite,
  dir: Schema.Literals(["in", "out", "local"]),
  msg: Schema.Unknown
})
export type TranscriptLine = typeof TranscriptLine.Type

/** A line as a recorder receives it, before the writer stamps its time. */
export type TranscriptEntry = Omit<TranscriptLine, "t">

export interface TranscriptWriter {
  /** Appends the entry as a line, its time the milliseconds since the meta line's `startedAt`. */
  readonly record: (entry: TranscriptEntry) => void
  /** The meta line followed by every line written so far. */
  readonly lines: () => ReadonlyArray<TranscriptMeta | TranscriptLine>
}

/**
 * The writer for recorders of untimed entries (the ACP transport's `tap`; Claude's session times
 * its own lines, `ClaudeAdapter`'s `transcript`). Messages are copied through JSON, so later
 * mutation by an SDK cannot change what was recorded.
 */
export const makeTranscriptWriter = (
  meta: { readonly provider: string } & Readonly<Record<string, unknown>>,
  now: () => number = Date.now,
  startedAt: number = now()
): TranscriptWriter => {
  const head: TranscriptMeta = { dir: "meta", ...meta, startedAt: new Date(startedAt).toISOString() }
  const lines: Array<TranscriptLine> = []
  return {
    record: ({ dir, msg }) =>
      lines.push({ t: now() - startedAt, dir, msg: JSON.parse(JSON.stringify(msg)) as unknown }),
    lines: () => [head, ...lines]
  }
}
