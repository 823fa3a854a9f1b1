import { Effect } from "effect"
import { ServerStartError, startServer, type RunningServer } from "../http/HttpServer.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { describeOffers, providerOffers } from "./providerOffers.ts"
import { providersFromEnv } from "./providersFromEnv.ts"
import { definedFields } from "../util/definedFields.ts"

export interface ServeInput {
  readonly host: string
  readonly port: number
  readonly token: string | undefined
  readonly allowOrigins: ReadonlyArray<string>
  readonly allowHosts: ReadonlyArray<string>
  readonly logLevel: "silent" | "error" | "warn" | "info" | "debug"
  readonly dataDir: string
}

/**
 * SIGINT or SIGTERM, listened for from before the server starts: a signal that arrives while it
 * starts, or right after the start-up line, still closes it gracefully instead of killing it.
 */
const stopSignal = Effect.acquireRelease(
  Effect.sync(() => {
    let stop = () => {}
    const stopped = new Promise<void>((resolve) => (stop = resolve))
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
    return { stopped, stop }
  }),
  ({ stop }) =>
    Effect.sync(() => {
      process.off("SIGINT", stop)
      process.off("SIGTERM", stop)
    })
)

/**
 * `planbridge serve`: runs the server until a stop signal. A configuration the server refuses
 * (a non-loopback host without a token, a bad PLANBRIDGE_CLAUDE_CHECKLIST) is a usage error.
 */
export const serve = (input: ServeInput) =>
  Effect.gen(function* () {
    const io = yield* Io
    const { stopped } = yield* stopSignal
    const token = input.token ?? process.env.PLANBRIDGE_TOKEN
    const started = yield* Effect.tryPromise({
      try: async (): Promise<RunningServer> =>
        startServer({
          dataDir: input.dataDir,
          host: input.host,
          port: input.port,
          ...definedFields({ token }),
          ...(input.allowOrigins.length === 0 ? {} : { allowedOrigins: input.allowOrigins }),
          ...(input.allowHosts.length === 0 ? {} : { allowedHosts: input.allowHosts }),
          providers: providersFromEnv(process.env),
          logLevel: input.logLevel
        }),
      catch: (error) => error
    }).pipe(
      Effect.catchIf(
        (error): error is ServerStartError => error instanceof ServerStartError,
        (error) => Effect.sync(() => io.err(`planbridge serve: ${error.message}\n`)).pipe(Effect.as(undefined))
      ),
      Effect.orDie
    )
    if (started === undefined) return ExitCode.usage
    io.out(
      `planbridge listening on ${started.url} (data dir ${input.dataDir}); ` +
        `recovered ${started.recovery.prompts} prompts, ${started.recovery.sessions} sessions; ` +
        `token: planbridge token --data-dir ${input.dataDir}\n` +
        describeOffers(providerOffers(process.env))
    )
    yield* Effect.promise(() => stopped)
    yield* Effect.promise(() => started.close())
    return ExitCode.ok
  }).pipe(Effect.scoped)
