import { Schema } from "effect"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { ago, offset } from "../../src/cli/age.ts"
import { promptCard } from "../../src/cli/promptCard.ts"
import { PromptDetail, PromptList } from "../../src/cli/promptsApi.ts"
import { promptTable } from "../../src/cli/promptTable.ts"

/**
 * `prompts show` and `prompts list` as operators read them. The inputs are PROTOCOL.md's own
 * examples of the operator API, decoded with the CLI's Schemas (so the CLI reads what the
 * documentation promises), then varied: a secret question, a pending prompt, narrow terminals.
 */
const example = (name: string): unknown => {
  const text = readFileSync(new URL("../../../../PROTOCOL.md", import.meta.url), "utf8")
  const block = new RegExp(`<!--\\s*${name}\\s*-->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(text)
  if (block === null) throw new Error(`PROTOCOL.md has no ${name} example`)
  return JSON.parse(block[1]!) as unknown
}

const asDetail = Schema.decodeUnknownSync(PromptDetail)
const asList = Schema.decodeUnknownSync(PromptList)
const detail = asDetail(example("OperatorPromptDetail"))
const listed = asList(example("OperatorPromptList")).prompts
const at = (iso: string, plusMs: number) => new Date(Date.parse(iso) + plusMs)

describe("ages", () => {
  it("reads as people say them", () => {
    const t = "2026-11-30T03:41:49.709Z"
    const after = [0, 3_000, 45_000, 3 * 60_000 + 5_000, 2 * 3_600_000, 4 * 86_400_000]
    expect(after.map((ms) => ago(t, at(t, ms)))).toEqual([
      "just now",
      "just now",
      "45 s ago",
      "3 min ago",
      "2 h ago",
      "4 days ago"
    ])
    expect(offset(t, "2026-11-30T03:41:53.240Z")).toBe("+3.5 s")
  })
})

describe("planbridge prompts show (card)", () => {
  it("shows thread, turn, age, questions with options and the chosen answer, resolution, timeline", () => {
    const card = promptCard(detail, at(detail.createdAt, 3 * 60_000))
    expect(card).toContain(`Prompt ${detail.promptId}\n`)
    expect(card).toContain(`  thread   ${detail.threadId}\n`)
    expect(card).toContain(`  turn     ${detail.turnId}\n`)
    expect(card).toContain("  asked    3 min ago (2026-11-30T03:41:49.709Z)\n")
    expect(card).toContain("  request  item/tool/requestUserInput #0 (resolved)\n")
    const first = "  1. Database: Which database should the service use?  [db_choice] (pick one, free text allowed)\n"
    expect(card).toContain(first)
    expect(card).toContain("     ( ) PostgreSQL (Recommended) — Relational, strong consistency.  [opt-0]\n")
    expect(card).toContain("     (x) SQLite — Embedded, zero-ops.  [opt-1]\n     answer: SQLite\n")
    expect(card).toContain("     (x) Unit only (Recommended) — Fast feedback.  [opt-0]\n")
    expect(card).toContain('     answer: Unit only (Recommended)\n     note: "plus fuzzing"\n')
    expect(card).toContain(
      "Resolution\n  answered by a person with the CLI 4 s after it was asked (2026-11-30T03:41:53.240Z)\n"
    )
    expect(card).toMatch(/Timeline\n {2}\+3\.5 s {4}#2212 {3}user-input\.resolved {2}answered\n/)
    expect(card).not.toContain('"payload"')
    expect(card.endsWith("\n")).toBe(true)
  })

  it("a secret question's answer is 'hidden', and none of its options is marked", () => {
    const secret = asDetail({
      ...detail,
      prompt: {
        ...detail.prompt,
        questions: detail.prompt.questions.map((q, i) => (i === 0 ? { ...q, secret: true } : q))
      },
      answers: [{ questionId: detail.prompt.questions[0]!.id, redacted: true }, ...(detail.answers ?? []).slice(1)]
    })
    const card = promptCard(secret, at(detail.createdAt, 60_000))
    const first = card.slice(card.indexOf("  1. "), card.indexOf("  2. "))
    expect(first).toContain("(pick one, free text allowed, secret)")
    expect(first).toContain("answer: hidden (secret)")
    expect(first).not.toContain("(x)")
  })

  it("a pending prompt says how long it has waited and that nothing is answered yet", () => {
    const unanswered = { status: "pending", resolution: null, answers: null, resolvedAt: null, timeline: [] }
    const pending = asDetail({ ...detail, ...unanswered })
    const card = promptCard(pending, at(detail.createdAt, 2 * 3_600_000))
    expect(card).toContain("Resolution\n  pending for 2 h\n")
    expect(card.match(/answer: not yet/g)).toHaveLength(2)
    expect(card).toContain("Timeline\n  (no events)\n")
  })
})

describe("planbridge prompts list (table)", () => {
  const cancelled = {
    ...listed[0]!,
    promptId: "claude-prompt:toolu_01",
    provider: "claude",
    status: "resolved",
    resolution: "cancelled",
    createdAt: "2026-11-30T01:41:49.709Z"
  }
  const prompts = asList({ prompts: [listed[0]!, cancelled] }).prompts
  const now = at(listed[0]!.createdAt, 3 * 60_000)

  it("shows each prompt's age and first question; without a terminal nothing is cut", () => {
    const table = promptTable(prompts, { now, columns: undefined })
    const lines = table.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^PROMPT +PROVIDER +STATUS +AGE +FIRST QUESTION$/)
    const question = "Which database should the service use\\?"
    expect(lines[1]).toMatch(new RegExp(`^${listed[0]!.promptId} +codex +pending +3 min ago +${question}$`))
    expect(lines[2]).toMatch(/^claude-prompt:toolu_01 +claude +cancelled +2 h ago +Which database/)
  })

  it("fits the terminal: the question is cut, never the prompt id; too narrow, each prompt takes two lines", () => {
    // The id (105 characters here: thread, native item and call ids) and the short columns take
    // 139: from 155 on, one row a prompt.
    for (const columns of [220, 180, 155]) {
      const lines = promptTable(prompts, { now, columns }).trimEnd().split("\n")
      for (const line of lines) expect(line.length, `${columns}: ${line}`).toBeLessThanOrEqual(columns)
      expect(lines[1]).toMatch(new RegExp(`^${listed[0]!.promptId} +codex +pending +3 min ago +Which`))
    }
    expect(promptTable(prompts, { now, columns: 155 })).toMatch(/ {2}Which database \S+…\n/)
    const narrow = promptTable(prompts, { now, columns: 60 }).trimEnd().split("\n")
    expect(narrow[0]).toBe(listed[0]!.promptId)
    expect(narrow[1]).toMatch(/^ {2}codex · pending · 3 min ago · Which database/)
    expect(narrow[1]!.length).toBeLessThanOrEqual(60)
    expect(narrow[2]).toBe("claude-prompt:toolu_01")
    expect(promptTable(prompts, { now, columns: 140 }).split("\n")[0]).toBe(listed[0]!.promptId)
  })

  it("says so when nothing matches", () => {
    expect(promptTable([], { now, columns: 80 })).toBe("no prompts\n")
  })
})
