import {
  resolvedByPhrase,
  type PromptQuestion,
  type RuntimeEvent,
  type UserInputAnswerEntry
} from "@planbridge/contracts"
import { ago, duration, offset } from "./age.ts"
import type { PromptDetail } from "./promptsApi.ts"

type Entry = UserInputAnswerEntry | undefined

/** What the answer to one question was, as shown: never a secret's value. */
const answerLines = (question: PromptQuestion, entry: Entry, pending: boolean): ReadonlyArray<string> => {
  if (question.secret || entry?.redacted === true) {
    if (pending) return ["answer: not yet"]
    return [entry === undefined ? "answer: none" : "answer: hidden (secret)"]
  }
  if (entry === undefined) return [pending ? "answer: not yet" : "answer: none"]
  const labelOf = (id: string) => question.options.find((o) => o.id === id)?.label ?? `${id} (unknown option)`
  const labels = (entry.selectedOptionIds ?? []).map(labelOf)
  const lines = labels.length > 0 ? [`answer: ${labels.join(", ")}`] : []
  if (entry.text !== undefined) lines.push(`${labels.length > 0 ? "note" : "answer"}: ${JSON.stringify(entry.text)}`)
  return lines.length > 0 ? lines : ["answer: empty"]
}

/** One question with its options; the chosen ones are marked, unless the question is secret. */
const questionBlock = (question: PromptQuestion, index: number, entry: Entry, pending: boolean): string => {
  const header = question.header === undefined ? "" : `${question.header}: `
  const kind = [
    question.multiSelect ? "pick several" : "pick one",
    ...(question.allowFreeform ? ["free text allowed"] : []),
    ...(question.secret ? ["secret"] : [])
  ].join(", ")
  const chosen = new Set(question.secret ? [] : (entry?.selectedOptionIds ?? []))
  const [on, off] = question.multiSelect ? ["[x]", "[ ]"] : ["(x)", "( )"]
  const options = question.options.map((o) => {
    const description = o.description === undefined ? "" : ` — ${o.description}`
    return `     ${chosen.has(o.id) ? on : off} ${o.label}${description}  [${o.id}]`
  })
  return [
    `  ${index + 1}. ${header}${question.label}  [${question.id}] (${kind})`,
    ...(question.description === undefined ? [] : [`     ${question.description}`]),
    ...options,
    ...answerLines(question, entry, pending).map((l) => `     ${l}`)
  ].join("\n")
}

/** A timeline event in a few words: what happened to the prompt or to the native request behind it. */
const summary = (event: RuntimeEvent): string => {
  switch (event.type) {
    case "request.opened":
      return `${event.payload.native.method} (${event.payload.requestKind})`
    case "request.resolved":
      return event.payload.resolution
    case "user-input.requested":
      return `${event.payload.prompt.questions.length} question(s)`
    case "user-input.resolved":
      return `${event.payload.resolution}${event.payload.reason === undefined ? "" : `: ${event.payload.reason}`}`
    default:
      return ""
  }
}

/** How the prompt ended, or how long it has been waiting. */
const resolutionLines = (p: PromptDetail, now: Date): ReadonlyArray<string> => {
  const since = (iso: string) => duration(Date.parse(iso) - Date.parse(p.createdAt))
  if (p.status === "pending") return [`pending for ${duration(now.getTime() - Date.parse(p.createdAt))}`]
  const when = p.resolvedAt === null ? "" : ` ${since(p.resolvedAt)} after it was asked (${p.resolvedAt})`
  const by = p.resolvedBy === undefined || p.resolvedBy === null ? [] : [resolvedByPhrase(p.resolvedBy)]
  return [
    `${[p.resolution ?? "resolved", ...by].join(" ")}${when}`,
    ...(p.reason === null ? [] : [`reason: ${p.reason}`])
  ]
}

/**
 * `planbridge prompts show` for people: who asked (thread, turn, provider, native request), how
 * long ago, each question with its options and the chosen answer (secrets as "hidden"), how it
 * was resolved, and the timeline of events about it. `--json` prints the API's body instead.
 */
export const promptCard = (p: PromptDetail, now: Date): string => {
  const pending = p.status === "pending"
  const entries = new Map((p.answers ?? []).map((a) => [a.questionId as string, a]))
  const request = p.request === null ? "none" : `${p.request.nativeMethod} #${p.request.nativeId} (${p.request.status})`
  const facts: ReadonlyArray<readonly [string, string]> = [
    ["provider", p.provider],
    ["thread", p.threadId],
    ["turn", p.turnId ?? "-"],
    ["asked", `${ago(p.createdAt, now)} (${p.createdAt})`],
    ["request", request],
    ["source", `${p.prompt.source}${p.prompt.blocking ? ", the agent waits for the answer" : ", not blocking"}`]
  ]
  const timeline = p.timeline.map((t) => {
    const what = summary(t.event)
    const when = offset(p.createdAt, t.event.createdAt).padEnd(9)
    return `  ${when} #${String(t.seq).padEnd(6)} ${t.event.type}${what === "" ? "" : `  ${what}`}`
  })
  return [
    `Prompt ${p.promptId}`,
    ...(p.prompt.title === undefined ? [] : [`  ${p.prompt.title}`]),
    ...(p.prompt.description === undefined ? [] : [`  ${p.prompt.description}`]),
    ...facts.map(([k, v]) => `  ${k.padEnd(9)}${v}`),
    "",
    "Questions",
    ...p.prompt.questions.map((q, i) => questionBlock(q, i, entries.get(q.id), pending)),
    "",
    "Resolution",
    ...resolutionLines(p, now).map((l) => `  ${l}`),
    "",
    "Timeline",
    ...(timeline.length > 0 ? timeline : ["  (no events)"]),
    ""
  ].join("\n")
}
