import {
  redactAnswerEntries,
  type RuntimeEvent,
  type UserInputAnswerEntry,
  type UserInputPrompt
} from "@planbridge/contracts"

export const REDACTED = "[redacted]"

/**
 * Defence in depth for secret answers: adapters already redact, but the ingestion refuses to
 * let a clear secret reach the database even if one did not. Secret entries become markers,
 * and any string in the raw native payload that equals (or contains) one of the clear values
 * is replaced, which covers the outgoing JSON-RPC response an adapter may attach as `raw`.
 */
export const redactResolvedSecrets = (event: RuntimeEvent, prompt: UserInputPrompt | undefined): RuntimeEvent => {
  if (event.type !== "user-input.resolved" || prompt === undefined) return event
  const secretIds = new Set(prompt.questions.filter((q) => q.secret).map((q) => q.id as string))
  if (secretIds.size === 0) return event
  const clear = collectClearValues(event.payload.answers, secretIds, prompt)
  const answers = redactAnswerEntries(prompt, event.payload.answers)
  const redacted: RuntimeEvent = { ...event, payload: { ...event.payload, answers } }
  if (event.raw === undefined || clear.length === 0) return redacted
  return { ...redacted, raw: { ...event.raw, payload: scrub(event.raw.payload, clear) as typeof event.raw.payload } }
}

const collectClearValues = (
  entries: ReadonlyArray<UserInputAnswerEntry>,
  secretIds: ReadonlySet<string>,
  prompt: UserInputPrompt
): ReadonlyArray<string> => {
  const values: Array<string> = []
  for (const entry of entries) {
    if (!secretIds.has(entry.questionId)) continue
    if (entry.text !== undefined && entry.text.length > 0) values.push(entry.text)
    const question = prompt.questions.find((q) => q.id === entry.questionId)
    for (const optionId of entry.selectedOptionIds ?? []) {
      const label = question?.options.find((o) => o.id === optionId)?.label
      if (label !== undefined && label.length > 0) values.push(label)
    }
  }
  return values
}

const scrub = (value: unknown, clear: ReadonlyArray<string>): unknown => {
  if (typeof value === "string") {
    return clear.reduce((text, secret) => text.split(secret).join(REDACTED), value)
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, clear))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k, clear) as string, scrub(v, clear)]))
  }
  return value
}
