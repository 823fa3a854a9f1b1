import type { PromptQuestion } from "@planbridge/contracts"

/** A question's answer being written: the options picked and the free text. */
export interface Draft {
  readonly selected: ReadonlyArray<string>
  readonly text: string
}

const key = (promptId: string) => `planbridge.draft.${promptId}`

/**
 * A question card's drafts, kept in this tab's session storage so that a reload keeps what was
 * picked and typed. A secret question's text is never written there (only the agent may have it).
 */
export const loadDrafts = (promptId: string): ReadonlyMap<string, Draft> => {
  try {
    const stored: unknown = JSON.parse(sessionStorage.getItem(key(promptId)) ?? "{}")
    if (typeof stored !== "object" || stored === null) return new Map()
    return new Map(
      Object.entries(stored).flatMap(([id, d]: [string, unknown]) => {
        if (typeof d !== "object" || d === null) return []
        const selected = "selected" in d && Array.isArray(d.selected) ? d.selected : []
        const picked = selected.filter((s): s is string => typeof s === "string")
        const text = "text" in d && typeof d.text === "string" ? d.text : ""
        return [[id, { selected: picked, text }] as const]
      })
    )
  } catch {
    return new Map()
  }
}

export const saveDrafts = (
  promptId: string,
  questions: ReadonlyArray<PromptQuestion>,
  drafts: ReadonlyMap<string, Draft>
): void => {
  const secret = new Set(questions.filter((q) => q.secret).map((q) => q.id as string))
  const kept = Object.fromEntries(
    [...drafts].map(([id, d]) => [id, secret.has(id) ? { selected: d.selected, text: "" } : d])
  )
  try {
    sessionStorage.setItem(key(promptId), JSON.stringify(kept))
  } catch {
    // Storage full or refused: the draft lives on in memory only.
  }
}

export const clearDrafts = (promptId: string): void => sessionStorage.removeItem(key(promptId))
