import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startServer, type LogDestination, type ServerOptions } from "../../src/http/HttpServer.ts"

export interface LogLine {
  readonly level: number
  readonly msg?: string
  readonly [key: string]: unknown
}

/** The server's real logger, captured line by line instead of going to stdout. */
export const captureLog = () => {
  const lines: Array<string> = []
  const waiters: Array<{ match: () => boolean; resolve: () => void }> = []
  const destination: LogDestination = {
    write: (line: string) => {
      lines.push(line)
      for (const w of [...waiters]) {
        if (w.match()) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve()
        }
      }
    }
  }
  const parsed = (): Array<LogLine> => lines.map((line) => JSON.parse(line) as LogLine)
  /** Resolves once the captured lines satisfy `match` (checked on every new line). */
  const until = (match: (lines: Array<LogLine>) => boolean, timeoutMs = 4_000): Promise<void> => {
    const check = () => match(parsed())
    if (check()) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`log never matched (${lines.length} lines)`)), timeoutMs)
      waiters.push({ match: check, resolve: () => (clearTimeout(timer), resolve()) })
    })
  }
  return { destination, text: () => lines.join(""), parsed, until }
}

/**
 * A server on loopback with no provider, in a fresh data dir (`planbridge-<label>-…`, the
 * caller removes it), logging through a captured destination; `options` override the defaults.
 */
export const startLoggedServer = async (label: string, options: Partial<ServerOptions> = {}) => {
  const dir = mkdtempSync(join(tmpdir(), `planbridge-${label}-`))
  const log = captureLog()
  const server = await startServer({
    dataDir: dir,
    host: "127.0.0.1",
    port: 0,
    providers: [],
    logDestination: log.destination,
    ...options
  })
  return { server, log, dir }
}
