import { ago } from "./age.ts"
import type { PromptView } from "./promptsApi.ts"

const GAP = "  "
/** Below this, a question is not worth showing on the row: the stacked layout gives it a line of its own. */
const MIN_QUESTION = 16

/** Cuts `text` to `width` characters, marking the cut. */
export const truncate = (text: string, width: number): string => {
  if (text.length <= width) return text
  return width <= 1 ? text.slice(0, Math.max(0, width)) : `${text.slice(0, width - 1).trimEnd()}…`
}

const statusOf = (p: PromptView): string => (p.status === "pending" ? "pending" : (p.resolution ?? "resolved"))

/**
 * `planbridge prompts list` for people: one row per prompt with its age and first question.
 * Prompt ids are never cut (operators copy them into `show` and `answer`); the question takes
 * what width is left. When even a short question does not fit next to the id, each prompt takes
 * two lines, the id alone on the first. Without a terminal (`columns` undefined) nothing is cut.
 */
export const promptTable = (
  prompts: ReadonlyArray<PromptView>,
  options: { readonly now: Date; readonly columns: number | undefined }
): string => {
  if (prompts.length === 0) return "no prompts\n"
  const rows = prompts.map((p) => ({
    cells: [p.promptId, p.provider, statusOf(p), ago(p.createdAt, options.now)],
    question: p.prompt.questions[0]?.label ?? ""
  }))
  const header = ["PROMPT", "PROVIDER", "STATUS", "AGE"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r.cells[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join(GAP)
  const fixed = widths.reduce((sum, w) => sum + w + GAP.length, 0)
  const room = options.columns === undefined ? Infinity : options.columns - fixed
  if (room >= MIN_QUESTION) {
    const cut = (q: string) => (room === Infinity ? q : truncate(q, room))
    return [`${line(header)}${GAP}FIRST QUESTION`, ...rows.map((r) => `${line(r.cells)}${GAP}${cut(r.question)}`)]
      .map((l) => `${l.trimEnd()}\n`)
      .join("")
  }
  const columns = options.columns ?? Infinity
  return rows
    .map((r) => {
      const [id, ...rest] = r.cells
      const detail = `  ${[...rest, r.question].filter((c) => c !== "").join(" · ")}`
      return `${id}\n${columns === Infinity ? detail : truncate(detail, columns)}\n`
    })
    .join("")
}
