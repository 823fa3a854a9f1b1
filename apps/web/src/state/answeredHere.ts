/**
 * Prompts and requests this tab answered, and those it showed while they were pending. One that
 * this tab saw pending and did not answer was resolved by another client; one that was already
 * resolved when the page loaded claims nothing either way.
 */
const answered = new Set<string>()
const seenPending = new Set<string>()

export const markAnsweredHere = (id: string): void => void answered.add(id)
export const markSeenPending = (id: string): void => void seenPending.add(id)

/** Whether a resolution this tab did not send should read "answered on another client". */
export const resolvedElsewhere = (id: string): boolean => seenPending.has(id) && !answered.has(id)
