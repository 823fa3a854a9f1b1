import { definedFields } from "../util/definedFields.ts"
import { describeCause } from "../util/describeCause.ts"
import { MAX_ID_CHARS, type WaitPolicy } from "@planbridge/contracts"
import websocket from "@fastify/websocket"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify"
import type { IncomingMessage } from "node:http"
import { resolve } from "node:path"
import type { Duplex } from "node:stream"
import { ProviderRegistry, type RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
import { SessionManager } from "../orchestration/SessionManager.ts"
import { recoverAfterRestart, type RecoveryReport } from "../orchestration/StartupRecovery.ts"
import { EventStore } from "../persistence/EventStore.ts"
import { ensurePrivateDir, PrivateFileError } from "../persistence/PrivateFiles.ts"
import { databaseFileIn, preparePrivateSqliteFiles } from "../persistence/SqliteFiles.ts"
import { isPostgresUrl } from "../persistence/postgres/StoreUrl.ts"
import { selectStore } from "../persistence/StoreSelection.ts"
import { ThreadReads } from "../persistence/ThreadReads.ts"
import { authenticationBy } from "../server/Authentication.ts"
import { serverLayer, type ServerRuntime } from "../server/ServerServices.ts"
import { serveConnection } from "../ws/Connection.ts"
import { ThreadHub } from "../ws/ThreadHub.ts"
import { rateLimited, scrubbingDestination, serializeRequest, type LogDestination } from "./LogHygiene.ts"
import { registerNotificationRoutes } from "./NotificationRoutes.ts"
import { operatorReply, registerOperatorRoutes } from "./OperatorRoutes.ts"
import { registerThreadImportRoutes } from "./ThreadImportRoutes.ts"
import { PUSH_ANSWER_PATH, registerPushAnswerRoute } from "./PushAnswerRoute.ts"
import { NO_ROUTE_SCHEMAS } from "./RouteSchemas.ts"
import { runtimeLogTo } from "./RuntimeLog.ts"
import { DEFAULT_WEB_ROOT, isApiPath, registerWebUi } from "./WebUi.ts"
import {
  defaultOriginAllowlist,
  hostAllowed,
  hostAllowlist,
  isLoopbackHost,
  loadOrCreateToken,
  originAllowed
} from "./Security.ts"

export type { LogDestination } from "./LogHygiene.ts"

/** Bounds of the HTTP layer (PROTOCOL.md, "Limits"). */
export const HEADERS_TIMEOUT_MS = 10_000
export const REQUEST_TIMEOUT_MS = 30_000
/** Client-caused WebSocket errors logged per window; the rest are counted into the next line. */
const CLIENT_ERROR_LOG_LINES = 10
const CLIENT_ERROR_LOG_WINDOW_MS = 60_000

export interface ServerOptions {
  readonly dataDir: string
  /**
   * A PostgreSQL URL (`--store`) to keep the event log and projections in; absent: SQLite in
   * the data dir. The data dir still holds the token, provider homes and process groups.
   */
  readonly store?: string
  readonly host: string
  readonly port: number
  /** Required to bind anywhere but loopback; defaults to the token stored in the data dir. */
  readonly token?: string
  readonly allowedOrigins?: ReadonlyArray<string>
  /**
   * Host names served besides `localhost`, `127.0.0.1`, `::1` and the bound host (a request whose
   * `Host` names anything else is refused: DNS rebinding defence). `--allow-host`, repeatable.
   */
  readonly allowedHosts?: ReadonlyArray<string>
  readonly providers: ReadonlyArray<RegisteredProvider>
  readonly logLevel?: "silent" | "error" | "warn" | "info" | "debug"
  readonly maxFrameBytes?: number
  /**
   * Where log lines go (default: stdout), one JSON line per `write`, already scrubbed: the
   * server's and the runtime's (`Effect.log*`, RuntimeLog.ts) alike.
   */
  readonly logDestination?: LogDestination
  /** A request whose headers are not complete after this long is answered 408 and closed. */
  readonly headersTimeoutMs?: number
  /** A request not complete (headers and body) after this long is answered 408 and closed. */
  readonly requestTimeoutMs?: number
  /** The built web UI served at `/` without a token (default: `apps/web/dist`). */
  readonly webRoot?: string
  /**
   * With a PostgreSQL store: how long a session lease lives unrenewed (default 15 s; from
   * PLANBRIDGE_LEASE_TTL_MS in the CLI). A replica that dies has its threads taken over within
   * about 4/3 of it.
   */
  readonly leaseTtlMs?: number
  /** What the server does with a question nobody answers, for sessions that do not say (default `wait`). */
  readonly waitPolicy?: WaitPolicy
}

/** The default time to live of a session lease (replicas on PostgreSQL). */
export const DEFAULT_LEASE_TTL_MS = 15_000

export interface RunningServer {
  readonly app: FastifyInstance
  readonly url: string
  readonly port: number
  readonly token: string
  readonly recovery: RecoveryReport
  readonly runtime: ServerRuntime
  /** Graceful: stops accepting, closes sockets, closes provider sessions, closes the database. */
  readonly close: () => Promise<void>
}

export class ServerStartError extends Schema.TaggedError<ServerStartError>()("ServerStartError", {
  message: Schema.String,
  /** What failed underneath (a data dir that cannot be made private, a store that cannot be opened). */
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/**
 * Planbridge as a running server: fastify with the WebSocket projection on `/ws` and the
 * operator API under `/api`, over the SQLite file in the data dir. Pending work from a previous
 * process is resolved `server_restarted` before the first client is served.
 */
export const startServer = async (options: ServerOptions): Promise<RunningServer> => {
  if (!isLoopbackHost(options.host) && options.token === undefined) {
    throw new ServerStartError({
      message: `refusing to bind to ${options.host} (not loopback) without an explicit token (--token or PLANBRIDGE_TOKEN)`
    })
  }
  const dataDir = resolve(options.dataDir)
  const filename = databaseFileIn(dataDir)
  // Found before the logger exists (the logger needs the token to scrub it): logged right after.
  const warnings: Array<string> = []
  let token: string
  try {
    ensurePrivateDir(dataDir, (w) => warnings.push(w))
    token = options.token ?? loadOrCreateToken(dataDir, (w) => warnings.push(w))
    if (options.store === undefined || !isPostgresUrl(options.store))
      preparePrivateSqliteFiles(filename, (w) => warnings.push(w))
  } catch (error) {
    if (error instanceof PrivateFileError) throw new ServerStartError({ message: error.message, cause: error })
    throw error
  }
  const maxFrameBytes = options.maxFrameBytes ?? 256 * 1024
  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS
  const app = Fastify({
    logger:
      options.logLevel === "silent"
        ? false
        : {
            level: options.logLevel ?? "info",
            stream: scrubbingDestination(options.logDestination ?? process.stdout, [token]),
            serializers: { req: serializeRequest }
          },
    bodyLimit: maxFrameBytes,
    // node checks these timeouts every connectionsCheckingInterval (30 s by default), which would
    // let a half-sent request hold its socket up to that much longer.
    requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    http: { headersTimeout, connectionsCheckingInterval: checkingIntervalFor(headersTimeout) },
    // Shutdown must not wait for idle keep-alive connections.
    forceCloseConnections: true,
    // An id in a path (`/api/prompts/:promptId/answer`) may be as long as the contracts allow,
    // percent-encoded: a UTF-16 code unit is at most 3 UTF-8 bytes, each `%XX`. Fastify's own
    // default (100) refused a Codex prompt id (thread, native item and call ids) outright.
    routerOptions: { maxParamLength: MAX_ID_CHARS * 9 },
    schemaController: NO_ROUTE_SCHEMAS
  })
  for (const warning of warnings) app.log.warn(warning)

  const store = selectStore({
    store: options.store,
    dataDir,
    warn: (w) => app.log.warn(w),
    replica: { token, leaseTtlMs: options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS }
  })
  const runtime = ManagedRuntime.make(
    // The hub's fiber lives in the layer's scope: it stops with the runtime, before the store closes.
    ThreadHub.layer.pipe(
      Layer.provideMerge(
        serverLayer({
          store,
          dataDir,
          providers: options.providers,
          ...definedFields({ waitPolicy: options.waitPolicy })
        })
      ),
      // Provided to the layer too, so the fibers it forks as it is built (notifications, replica
      // duties, the hub) log through the server's logger as well.
      Layer.provideMerge(runtimeLogTo(app.log))
    )
  )
  const recovery = await runtime.runPromise(recoverAfterRestart).catch(async (error: unknown) => {
    // The store cannot be opened (a database unreachable, or held by another server): said, not a crash.
    await runtime.dispose().catch(() => undefined)
    throw new ServerStartError({ message: describeCause(error), cause: error })
  })
  const { events, threads, registry, sessions, hub } = await runtime.runPromise(
    Effect.gen(function* () {
      return {
        events: yield* EventStore,
        threads: yield* ThreadReads,
        registry: yield* ProviderRegistry,
        sessions: yield* SessionManager,
        hub: yield* ThreadHub
      }
    })
  )
  const auth = authenticationBy(token)

  let origins: ReadonlySet<string> = new Set(options.allowedOrigins ?? [])
  const hosts = hostAllowlist(options.host, options.allowedHosts)

  /**
   * After an upgrade request node hands its socket over and no HTTP parser will free it: a refusal
   * must close it, or each refused upgrade keeps a file descriptor until the process runs out.
   */
  const refuse = (req: FastifyRequest, reply: FastifyReply, status: number, message: string) => {
    if (req.headers.upgrade !== undefined) {
      void reply.header("connection", "close")
      reply.raw.once("finish", () => freeSocket(req.raw.socket))
    }
    return reply.code(status).send({ error: { code: "unauthorized", message } })
  }

  // Every request must name a served host; every HTTP call needs the token in a header and an
  // acceptable Origin. The WebSocket upgrade may instead carry the token in its first frame
  // (browsers cannot set headers), and its Origin is checked by verifyClient below. The web UI's
  // static files (GET/HEAD outside /api and /ws) need no token: the page itself holds none.
  app.addHook("onRequest", async (req, reply) => {
    if (!hostAllowed(req.headers.host, hosts)) {
      const message = "the Host header names a host that is not allowed (DNS rebinding defence; see --allow-host)"
      return refuse(req, reply, 403, message)
    }
    const isWsPath = req.url === "/ws" || req.url.startsWith("/ws?")
    if (req.headers.upgrade !== undefined && !isWsPath) {
      return refuse(req, reply, 404, "WebSocket upgrades are served on /ws only")
    }
    if (isWsPath) return
    if ((req.method === "GET" || req.method === "HEAD") && !isApiPath(req.url)) return
    if (!originAllowed(req.headers.origin, origins)) {
      return refuse(req, reply, 403, `origin ${req.headers.origin} is not allowed`)
    }
    // A notification's action answers with its own capability, not the token (PushAnswerRoute.ts).
    if (req.method === "POST" && req.url === PUSH_ANSWER_PATH) return
    if (!auth.acceptsHeader(req.headers.authorization)) {
      return refuse(req, reply, 401, "missing or wrong token (Authorization: Bearer <token>)")
    }
  })

  const logClientError = rateLimited(CLIENT_ERROR_LOG_LINES, CLIENT_ERROR_LOG_WINDOW_MS)
  await app.register(websocket, {
    options: {
      maxPayload: maxFrameBytes * 4,
      // No extension (ws's default, said here because the feed relies on it): live events are
      // written to the socket as whole frames made once for all followers (ws/EventFrames.ts).
      perMessageDeflate: false,
      verifyClient: (info: { req: IncomingMessage }, done: (ok: boolean, code?: number, message?: string) => void) => {
        if (!originAllowed(info.req.headers.origin, origins)) return done(false, 403, "Origin not allowed")
        // Planbridge defines no subprotocol. One offered anyway is often a credential (a common
        // way to smuggle a token past browsers): refuse it rather than echo it back.
        if (info.req.headers["sec-websocket-protocol"] !== undefined) {
          return done(false, 400, "no WebSocket subprotocol is defined; send the token in hello or Authorization")
        }
        done(true)
      },
      handleProtocols: () => false
    },
    // The default logs every error at error level with its stack and kills the socket at once,
    // which turns a 1009/1002/1007 close into a reset (1006) for a client still writing.
    errorHandler: (error, socket, request) => {
      if (isClientProtocolError(error)) {
        // `ws` has already started the close handshake with the matching code; let it finish.
        logClientError((dropped) => logProtocolError(request.log, error, dropped))
        return
      }
      request.log.error({ err: error }, "websocket handler failed")
      socket.terminate()
    }
  })
  app.get("/ws", { websocket: true }, (socket, req) => {
    serveConnection(socket, {
      runtime,
      reads: { events, threads },
      threadList: { threads, isLive: sessions.isLive },
      auth,
      preAuthenticated: auth.acceptsHeader(req.headers.authorization),
      providers: registry.list,
      maxFrameBytes,
      maxBufferedBytes: 16 * 1024 * 1024,
      helloTimeoutMs: 10_000,
      hub,
      // `ws` writes to the request's socket once upgraded.
      stream: req.raw.socket,
      log: req.log
    })
  })
  registerOperatorRoutes(app, runtime)
  registerNotificationRoutes(app, operatorReply(runtime))
  registerThreadImportRoutes(app, operatorReply(runtime))
  registerPushAnswerRoute(app, operatorReply(runtime))
  await registerWebUi(app, options.webRoot ?? DEFAULT_WEB_ROOT)

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
      // Stops the hub and every connection's feed fibers too (forked in the runtime's scopes).
      await runtime.dispose()
    })())

  return { app, url: `http://${host}:${port}`, port, token, recovery, runtime, close }
}

/** Timeouts are checked this often: a quarter of the header timeout, within 10 ms … 1 s. */
const checkingIntervalFor = (headersTimeoutMs: number): number =>
  Math.min(1_000, Math.max(10, Math.floor(headersTimeoutMs / 4)))

/** Ends an upgrade request's socket once its response is out, and frees it. */
const freeSocket = (socket: Duplex): void => {
  socket.once("finish", () => socket.destroy())
  socket.end()
}

/** `ws` tags the protocol violations it detects in a client's frames with a `WS_ERR_*` code. */
const isClientProtocolError = (error: Error): boolean => {
  const code = (error as { code?: unknown }).code
  return typeof code === "string" && code.startsWith("WS_ERR_")
}

const logProtocolError = (log: FastifyBaseLogger, error: Error, dropped: number): void => {
  const code = (error as { code?: unknown }).code
  const details = { code, reason: error.message, ...(dropped > 0 ? { droppedSinceLastLine: dropped } : {}) }
  log.info(details, "websocket protocol error from client")
}
