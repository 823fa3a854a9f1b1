const KEY = "planbridge.token"

/**
 * The token arrives as `#token=…` (a fragment never reaches the server, its logs or a Referer).
 * It moves to session storage, scoped to this tab, and leaves the address bar and history.
 */
export const takeToken = (): string | undefined => {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash)
  if (match?.[1] !== undefined) {
    sessionStorage.setItem(KEY, decodeURIComponent(match[1]))
    window.history.replaceState(null, "", window.location.pathname + window.location.search)
  }
  return sessionStorage.getItem(KEY) ?? undefined
}

export const storeToken = (token: string): void => sessionStorage.setItem(KEY, token)

/** A refused token is forgotten, so the next load asks again. */
export const forgetToken = (): void => sessionStorage.removeItem(KEY)

/** The token this tab holds, if any (the operator API calls of push.ts send it). */
export const storedToken = (): string | undefined => sessionStorage.getItem(KEY) ?? undefined
