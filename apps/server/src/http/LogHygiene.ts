/**
 * What reaches the log. Query strings end up in URLs that clients (and attackers) choose, and a
 * token in one, or in a header, must not be written down; a client that can make the server log
 * at length can fill the disk. So: request URLs are logged without their query, every line is
 * scrubbed of query strings, bearer credentials and the token itself on its way out, and
 * client-caused errors are summarised at a bounded rate.
 */

export interface LogDestination {
  readonly write: (line: string) => unknown
}

const REDACTED = "[redacted]"

/** `/api/threads?token=x` → `/api/threads?[redacted]`: the path stays useful, the query is gone. */
export const redactUrl = (url: string): string => {
  const query = url.indexOf("?")
  return query === -1 ? url : `${url.slice(0, query)}?${REDACTED}`
}

// A query after a path or URL, inside a JSON line: stops at whitespace, a quote or an escape, so
// the line stays valid JSON. Prose such as "Approve the plan?" has no path before its "?".
const QUERY = /(\/[^\s"\\?]*)\?[^\s"\\]*/g
const BEARER = /\b(Bearer|Basic)\s+[^\s"\\]+/gi

/** Every serialized log line goes through this before it is written. */
export const scrubLogLine = (line: string, secrets: ReadonlyArray<string>): string => {
  let out = line.replace(QUERY, `$1?${REDACTED}`).replace(BEARER, `$1 ${REDACTED}`)
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join(REDACTED)
  return out
}

export const scrubbingDestination = (target: LogDestination, secrets: ReadonlyArray<string>): LogDestination => ({
  write: (line: string) => target.write(scrubLogLine(line, secrets))
})

interface LoggedRequest {
  readonly method: string
  readonly url: string
  readonly host: string
  readonly ip: string
  readonly socket?: { readonly remotePort?: number | undefined } | null | undefined
}

/** fastify's request serializer, without the query string (and, as before, without headers). */
export const serializeRequest = (req: LoggedRequest) => ({
  method: req.method,
  url: redactUrl(req.url),
  host: req.host,
  remoteAddress: req.ip,
  ...(req.socket?.remotePort === undefined ? {} : { remotePort: req.socket.remotePort })
})

/**
 * At most `perWindow` calls of `log` per `windowMs`; the first call let through after a drop
 * learns how many were dropped, so the log still tells the volume.
 */
export const rateLimited = (perWindow: number, windowMs: number, now: () => number = Date.now) => {
  let windowStart = -Infinity
  let used = 0
  let dropped = 0
  return (log: (dropped: number) => void): void => {
    const t = now()
    if (t - windowStart >= windowMs) {
      windowStart = t
      used = 0
    }
    if (used >= perWindow) {
      dropped++
      return
    }
    used++
    const before = dropped
    dropped = 0
    log(before)
  }
}
