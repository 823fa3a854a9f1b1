import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib"

/**
 * The skeleton both scripted model mocks share (Anthropic Messages, OpenAI Responses): a
 * loopback HTTP server that logs every request, answers "main" requests from a queue of
 * scripted turns and everything else the way its API wants. The wire formats stay in the
 * wrappers; this file knows nothing of either API.
 */

/** A request as it arrived, before the wrapper turns it into its log entry. */
export interface ArrivedRequest<Body> {
  /** Position in the whole log (main and other requests). */
  readonly index: number
  readonly method: string
  readonly path: string
  /** As node received them (lower-case names): lets a test see which credential was sent. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: Body
}

export interface ScriptedModelServerOptions<Body, Logged, Scripted, Turn> {
  /** Appended to `http://127.0.0.1:PORT` in `baseUrl` (e.g. "/v1"). */
  readonly basePath?: string
  /** The body from its decompressed text; a throw answers the request with `fail`. */
  readonly parseBody: (text: string) => Body
  /** Whether the request consumes the next scripted turn. */
  readonly isMain: (request: ArrivedRequest<Body>) => boolean
  /** The log entry; `unscripted` is true for a main request that found the script empty. */
  readonly log: (request: ArrivedRequest<Body>, unscripted: boolean) => Logged
  /** The turn a main request is answered with (`next` is undefined when the script is empty). */
  readonly turnOf: (next: Scripted | undefined, logged: Logged) => Turn
  /** Writes the answer to a main request; `mainIndex` counts main requests only. */
  readonly respond: (res: ServerResponse, turn: Turn, logged: Logged, mainIndex: number) => void | Promise<void>
  /** Answers every other request. */
  readonly respondOther: (res: ServerResponse, logged: Logged) => void
  /** Answers a request whose handling threw before anything was written. */
  readonly fail: (res: ServerResponse, error: unknown) => void
  /**
   * Keep only the newest this many requests in the log (default: all). A long-running demo
   * server sets it: each request carries the whole conversation. Counts and ids stay global.
   */
  readonly maxLogged?: number
}

export interface ScriptedModelServer<Logged, Scripted> {
  readonly baseUrl: string
  /** Every request received, in arrival order. */
  readonly requests: ReadonlyArray<Logged>
  readonly mainRequests: () => ReadonlyArray<Logged>
  /** Appends turns to the script; main requests consume them in order. */
  readonly script: (...turns: ReadonlyArray<Scripted>) => void
  /** Resolves once `count` main requests have arrived (already-arrived ones count). */
  readonly waitForMainRequests: (count: number) => Promise<ReadonlyArray<Logged>>
  /** Turns scripted but not yet consumed. */
  readonly pending: () => number
  readonly close: () => Promise<void>
}

export const startScriptedModelServer = async <Body, Logged, Scripted, Turn>(
  options: ScriptedModelServerOptions<Body, Logged, Scripted, Turn>
): Promise<ScriptedModelServer<Logged, Scripted>> => {
  const requests: Array<Logged> = []
  const main: Array<Logged> = []
  // Global counts: the log may be trimmed, indices and waiters count every request ever received.
  let received = 0
  let mainReceived = 0
  const script: Array<Scripted> = []
  const waiters: Array<{ count: number; resolve: (r: ReadonlyArray<Logged>) => void }> = []
  const mainRequests = () => [...main]

  const notify = () => {
    for (const waiter of [...waiters]) {
      if (mainReceived >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(mainRequests())
      }
    }
  }

  const keep = (log: Array<Logged>, entry: Logged) => {
    log.push(entry)
    if (options.maxLogged !== undefined && log.length > options.maxLogged) log.splice(0, log.length - options.maxLogged)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const text = decodeBody(await readBody(req), req.headers["content-encoding"])
    const arrived: ArrivedRequest<Body> = {
      index: received++,
      method: req.method ?? "",
      headers: req.headers,
      path: (req.url ?? "/").split("?")[0] ?? "/",
      body: options.parseBody(text)
    }
    if (!options.isMain(arrived)) {
      const logged = options.log(arrived, false)
      keep(requests, logged)
      options.respondOther(res, logged)
      return
    }
    const next = script.shift()
    const logged = options.log(arrived, next === undefined)
    keep(requests, logged)
    keep(main, logged)
    const mainIndex = mainReceived++
    const turn = options.turnOf(next, logged)
    notify()
    await options.respond(res, turn, logged, mainIndex)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.end()
      else options.fail(res, error)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo

  return {
    baseUrl: `http://127.0.0.1:${port}${options.basePath ?? ""}`,
    requests,
    mainRequests,
    script: (...turns) => {
      script.push(...turns)
    },
    waitForMainRequests: (count) =>
      new Promise((resolve) => {
        waiters.push({ count, resolve })
        notify()
      }),
    pending: () => script.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

// ---- wire helpers -----------------------------------------------------------------------------

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

// Codex compresses its request bodies; the Claude CLI does not, but may one day.
const decodeBody = (raw: Buffer, encoding: string | undefined): string => {
  switch (encoding) {
    case "gzip":
      return gunzipSync(raw).toString("utf8")
    case "deflate":
      return inflateSync(raw).toString("utf8")
    case "br":
      return brotliDecompressSync(raw).toString("utf8")
    default:
      return raw.toString("utf8")
  }
}

/**
 * A part for the ids a scripted model gives, new on every start (issue 34). The real model
 * services' ids are unique for good; a counter alone starts again with each model server, and a
 * thread outlives it (a restarted server, a resumed thread), so Codex would hand the next reply
 * the id of an old one. 48 random bits: no two starts of a thread's life share one in practice.
 */
export const modelRunId = (): string => randomBytes(6).toString("hex")

export const writeJson = (res: ServerResponse, body: unknown, status = 200): void => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

export const openEventStream = (res: ServerResponse, headers: Readonly<Record<string, string>> = {}): void => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers })
}

/** One server-sent event, named after the payload's `type`, as both APIs frame them. */
export const writeEvent = (res: ServerResponse, event: Readonly<Record<string, unknown>>): void => {
  res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`)
}

/** Splits text into pieces of `size` characters so that clients see real deltas, not one blob. */
export const pieces = (text: string, size: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out.length > 0 ? out : [""]
}
