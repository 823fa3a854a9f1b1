import { randomBytes, timingSafeEqual } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { isIP } from "node:net"
import { join } from "node:path"

export const tokenFileIn = (dataDir: string): string => join(dataDir, "token")

/**
 * The server's access token: generated on first start, stored with mode 0600 beside the
 * database, printed by `planbridge token`. It is never accepted in a URL.
 */
export const loadOrCreateToken = (dataDir: string): string => {
  const file = tokenFileIn(dataDir)
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim()
    if (token.length >= 32) return token
  }
  mkdirSync(dataDir, { recursive: true })
  const token = randomBytes(32).toString("base64url")
  writeFileSync(file, `${token}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
  return token
}

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

export const isLoopbackHost = (host: string): boolean => {
  if (host === "localhost") return true
  if (isIP(host) === 4) return host.startsWith("127.")
  return host === "::1"
}

/**
 * Browsers always send `Origin`; other clients usually do not. A request with an Origin must
 * come from the allowlist (by default only pages served from loopback on this server's port),
 * so that a web page the user happens to visit cannot drive the agents.
 */
export const originAllowed = (origin: string | undefined, allowlist: ReadonlySet<string>): boolean =>
  origin === undefined || allowlist.has(origin)

export const defaultOriginAllowlist = (port: number): ReadonlySet<string> =>
  new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`])
