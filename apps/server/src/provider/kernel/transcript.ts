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

export const TranscriptDirection = Schema.Literals(["in", "out", "local"])
export type TranscriptDirection = typeof TranscriptDirection.Type

export const TranscriptLine = Schema.Struct({ t: Schema.Finite, dir: TranscriptDirection, msg: Schema.Unknown })
export type TranscriptLine = typeof TranscriptLine.Type

/** A local line's message: its `kind`, then the provider's fields. */
export const LocalMessage = Schema.StructWithRest(Schema.Struct({ kind: Schema.String }), [
  Schema.Record(Schema.String, Schema.Unknown)
])
export type LocalMessage = typeof LocalMessage.Type

/** A line as a recorder receives it, before the writer stamps its time. */
export interface TranscriptEntry {
  readonly dir: TranscriptDirection
  readonly msg: unknown
}

export interface TranscriptWriter {
  /** Appends a line stamped with the time since the meta line's `startedAt`. */
  readonly write: (dir: TranscriptDirection, msg: unknown) => void
  /** The meta line followed by every line written so far. */
  readonly lines: () => ReadonlyArray<TranscriptMeta | TranscriptLine>
}

/**
 * The one writer: every recorder (live sessions in tests, `record-fixtures`) goes through it.
 * Messages are copied through JSON, so later mutation by an SDK cannot change what was recorded.
 */
export const makeTranscriptWriter = (
  meta: { readonly provider: string } & Readonly<Record<string, unknown>>,
  now: () => number = Date.now,
  startedAt: number = now()
): TranscriptWriter => {
  const head: TranscriptMeta = {
    dir: "meta",
    ...meta,
    provider: meta.provider,
    startedAt: new Date(startedAt).toISOString()
  }
  const lines: Array<TranscriptLine> = []
  return {
    write: (dir, msg) => lines.push({ t: now() - startedAt, dir, msg: JSON.parse(JSON.stringify(msg)) as unknown }),
    lines: () => [head, ...lines]
  }
}

/** A transcript as JSONL text, one line each, as the fixtures are stored. */
export const formatTranscript = (lines: ReadonlyArray<unknown>): string =>
  lines.map((line) => `${JSON.stringify(line)}\n`).join("")

/**
 * JSONL text → its lines as JSON values (blank lines skipped), or the 1-based number of the
 * first line that is not JSON. What the lines mean is `replay`'s to check.
 */
export const parseTranscriptText = (
  text: string
): { readonly lines: ReadonlyArray<unknown> } | { readonly notJson: number } => {
  const lines: Array<unknown> = []
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue
    try {
      lines.push(JSON.parse(line))
    } catch {
      return { notJson: index + 1 }
    }
  }
  return { lines }
}
