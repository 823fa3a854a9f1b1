const KEY = "planbridge.clientId"

/**
 * This browser's own id, kept in local storage so that it outlives reloads and is shared by its
 * tabs: the server records it on what this browser resolves (`resolvedBy.clientId`), and a card
 * resolved with it reads "answered by you on this browser". Not a secret: it names, never grants.
 */
const loadClientId = (): string => {
  const stored = localStorage.getItem(KEY)
  if (stored !== null && stored.length > 0 && stored.length <= 200) return stored
  const made = `web-${crypto.randomUUID()}`
  localStorage.setItem(KEY, made)
  return made
}

export const clientId = loadClientId()
