import { timingSafeEqual } from "node:crypto"

/** Constant-time comparison, so that response timing does not leak the token. */
export const tokenMatches = (expected: string, presented: string | undefined): boolean => {
  if (presented === undefined) return false
  const a = Buffer.from(expected)
  const b = Buffer.from(presented)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** `Authorization: Bearer <token>` → the token. */
export const bearerToken = (header: string | undefined): string | undefined => {
  const match = header === undefined ? null : /^Bearer\s+(\S+)$/i.exec(header)
  return match?.[1]
}

/**
 * Who may use the server: whoever presents its access token. HTTP calls present it in an
 * `Authorization: Bearer` header; a WebSocket client either in that header at the upgrade or,
 * since browsers cannot set headers there, in its `hello` frame. Both edges ask this.
 */
export interface Authentication {
  /** A token as presented in a `hello` frame. */
  readonly acceptsToken: (presented: string | undefined) => boolean
  /** An `Authorization` header (HTTP, or the WebSocket upgrade). */
  readonly acceptsHeader: (authorization: string | undefined) => boolean
}

export const authenticationBy = (token: string): Authentication => ({
  acceptsToken: (presented) => tokenMatches(token, presented),
  acceptsHeader: (authorization) => tokenMatches(token, bearerToken(authorization))
})
