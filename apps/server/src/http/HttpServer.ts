import websocket from "@fastify/websocket"
import { Effect, Layer, ManagedRuntime } from "effect"
import Fastify, { type FastifyInstance } from "fastify"
import type { IncomingMessage } from "node:http"
import { resolve } from "node:path"
import { ProviderRegistry, type RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
import { RuntimeIngestion } from "../orchestration/RuntimeIngestion.ts"
import { SessionManager } from "../orchestration/SessionManager.ts"
import { recoverAfterRestart, type RecoveryReport } from "../orchestration/StartupRecovery.ts"
import { Database, databaseFileIn } from "../persistence/Database.ts"
import { OperatorQueries } from "../persistence/OperatorQueries.ts"
import { serveConnection } from "../ws/Connection.ts"
import { startThreadHub } from "../ws/ThreadHub.ts"
import { registerOperatorRoutes } from "./OperatorRoutes.ts"
import { bearerToken, defaultOriginAllowlist, isLoopbackHost, loadOrCreateToken, originAllowed, tokenMatches } from "./Security.ts"

export interface ServerOptions {
  readonly dataDir: string
  readonly host: string
  readonly port: number
  /** Required to bind anywhere but loopback; defaults to the token stored in the data dir. */
  readonly token?: string
  readonly allowedOrigins?: ReadonlyArray<string>
  readonly providers: ReadonlyArray<RegisteredProvider>
  readonly logLevel?: "silent" | "error" | "warn" | "info" | "debug"
  readonly maxFrameBytes?: number
}

export interface RunningServer {
  readonly app: FastifyInstance
  readonly url: string
  readonly port: number
  readonly token: string
  readonly recovery: RecoveryReport
  readonly runtime: ManagedRuntime.ManagedRuntime<Database | RuntimeIngestion | SessionManager | ProviderRegistry | OperatorQueries, unknown>
  /** Graceful: stops accepting, closes sockets, closes provider sessions, closes the database. */
  readonly close: () => Promise<void>
}

export class ServerStartError extends Error {}

/**
 * Planbridge as a running server: fastify with the WebSocket projection on `/ws` and the
 * operator API under `/api`, over the SQLite file in the data dir. Pending work from a previous
 * process is resolved `server_restarted` before the first client is served.
 */
export const startServer = async (options: ServerOptions): Promise<RunningServer> => {
  if (!isLoopbackHost(options.host) && options.token === undefined) {
    throw new ServerStartError(`refusing to bind to ${options.host} (not loopback) without an explicit token (--token or PLANBRIDGE_TOKEN)`)
  }
  const token = options.token ?? loadOrCreateToken(resolve(options.dataDir))
  const database = Database.layer({ filename: databaseFileIn(resolve(options.dataDir)) })
  const layer = SessionManager.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(RuntimeIngestion.layer, OperatorQueries.layer, ProviderRegistry.layer(options.providers))),
    Layer.provideMerge(database)
  )
  const runtime = ManagedRuntime.make(layer)
  const recovery = await runtime.runPromise(recoverAfterRestart)
  const hub = await startThreadHub(runtime)
  const providers = runtime.runSync(
    Effect.gen(function* () {
      return (yield* ProviderRegistry).list()
    })
  )
  const maxFrameBytes = options.maxFrameBytes ?? 256 * 1024

  const app = Fastify({
    logger: options.logLevel === "silent" ? false : { level: options.logLevel ?? "info" },
    bodyLimit: maxFrameBytes,
    // A refused WebSocket upgrade leaves its socket open; shutdown must not wait for it.
    forceCloseConnections: true
  })
  let origins: ReadonlySet<string> = new Set(options.allowedOrigins ?? [])

  // Every HTTP call needs the token in a header and an acceptable Origin; the WebSocket
  // upgrade may instead carry the token in its first frame (browsers cannot set headers).
  app.addHook("onRequest", async (req, reply) => {
    // The upgrade's Origin is checked by the WebSocket server itself (verifyClient below), which
    // refuses with 403 and closes the socket; a reply from here would leave the socket open.
    if (req.url === "/ws" || req.url.startsWith("/ws?")) return
    if (!originAllowed(req.headers.origin, origins)) {
      return reply.code(403).send({ error: { code: "unauthorized", message: `origin ${req.headers.origin} is not allowed` } })
    }
    if (!tokenMatches(token, bearerToken(req.headers.authorization))) {
      return reply.code(401).send({ error: { code: "unauthorized", message: "missing or wrong token (Authorization: Bearer <token>)" } })
    }
  })

  await app.register(websocket, {
    options: {
      maxPayload: maxFrameBytes * 4,
      verifyClient: (info: { req: IncomingMessage }, done: (ok: boolean, code?: number, message?: string) => void) =>
        originAllowed(info.req.headers.origin, origins) ? done(true) : done(false, 403, "Origin not allowed")
    }
  })
  app.get("/ws", { websocket: true }, (socket, req) => {
    serveConnection(socket, {
      runtime,
      token,
      preAuthenticated: tokenMatches(token, bearerToken(req.headers.authorization)),
      providers,
      maxFrameBytes,
      maxBufferedBytes: 16 * 1024 * 1024,
      helloTimeoutMs: 10_000,
      hub
    })
  })
  registerOperatorRoutes(app, runtime)

  try {
    await app.listen({ host: options.host, port: options.port })
  } catch (error) {
    await runtime.dispose()
    throw error
  }
  const address = app.server.address()
  const port = typeof address === "object" && address !== null ? address.port : options.port
  if (options.allowedOrigins === undefined) origins = defaultOriginAllowlist(port)
  const host = options.host.includes(":") ? `[${options.host}]` : options.host

  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= (async () => {
      for (const client of app.websocketServer.clients) client.close(1001, "server shutting down")
      await app.close()
      await hub.stop()
      await runtime.dispose()
    })())

  return { app, url: `http://${host}:${port}`, port, token, recovery, runtime, close }
}
