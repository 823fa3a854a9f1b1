/**
 * Prompts and requests this tab answered: any other resolution of them came from another client
 * (or the provider), and the card says so.
 */
const answered = new Set<string>()

export const markAnsweredHere = (id: string): void => void answered.add(id)
export const answeredHere = (id: string): boolean => answered.has(id)
