import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { isIP } from "node:net"
import { networkInterfaces } from "node:os"
import { join } from "node:path"
import { ensurePrivateDir, ensurePrivateFile, warnOnStderr, type Warn } from "../persistence/PrivateFiles.ts"

export const tokenFileIn = (dataDir: string): string => join(dataDir, "token")

/**
 * The server's access token: generated on first start, stored with mode 0600 beside the
 * database (in a 0700 data dir), printed by `planbridge token`. It is never accepted in a URL.
 * A token file (or data dir) that other users can read is tightened first, with a warning.
 */
export const loadOrCreateToken = (dataDir: string, warn: Warn = warnOnStderr): string => {
  ensurePrivateDir(dataDir, warn)
  const file = tokenFileIn(dataDir)
  if (existsSync(file)) {
    ensurePrivateFile(file, warn)
    const token = readFileSync(file, "utf8").trim()
    if (token.length >= 32) return token
  }
  const token = randomBytes(32).toString("base64url")
  // A new file gets 0600 (the umask only removes bits); an existing one was made private above.
  writeFileSync(file, `${token}\n`, { mode: 0o600 })
  return token
}

/**
 * The stored token, never creating one (a new token would match no running server): undefined
 * when the data dir has none. A token file (or data dir) others can read is tightened first.
 */
export const readStoredToken = (dataDir: string, warn: Warn = warnOnStderr): string | undefined => {
  const file = tokenFileIn(dataDir)
  if (!existsSync(file)) return undefined
  ensurePrivateDir(dataDir, warn)
  ensurePrivateFile(file, warn)
  const token = readFileSync(file, "utf8").trim()
  return token.length >= 32 ? token : undefined
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

/**
 * The name in a `Host` header (or an allowlist entry): lowercase, without port, brackets or
 * trailing dot. `[::1]:4317` → `::1`, `LocalHost.:80` → `localhost`.
 */
export const hostnameOf = (host: string): string => {
  const h = host.trim().toLowerCase()
  if (isIP(h) === 6) return h
  const close = h.indexOf("]")
  const name = h.startsWith("[") ? h.slice(1, close === -1 ? undefined : close) : h.replace(/:\d*$/, "")
  return name.endsWith(".") ? name.slice(0, -1) : name
}

/**
 * DNS rebinding defence: a page on `http://evil.example:4317` whose name the attacker re-points
 * to 127.0.0.1 is same-origin for the browser, so Origin checks do not see it; its `Host` still
 * names the attacker's domain. Loopback names and the bound host are served, plus `extra`; a
 * wildcard bind (0.0.0.0, ::) also serves this machine's own addresses, which no DNS answer
 * can rebind (an IP literal is not looked up).
 */
export const hostAllowlist = (boundHost: string, extra: ReadonlyArray<string> = []): ReadonlySet<string> => {
  const wildcard = boundHost === "0.0.0.0" || boundHost === "::"
  const own = wildcard ? Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)) : []
  return new Set(["localhost", "127.0.0.1", "::1", boundHost, ...own, ...extra].map(hostnameOf))
}

export const hostAllowed = (host: string | undefined, allowlist: ReadonlySet<string>): boolean =>
  host !== undefined && allowlist.has(hostnameOf(host))
