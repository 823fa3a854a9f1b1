/**
 * A transcript's file form (`fixtures/<provider>/*.jsonl`): JSON Lines, one transcript line
 * (`provider/kernel/transcript.ts`) each. Read by `planbridge replay`, written by the recorders.
 */

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
