import { Effect } from "effect"
import { browserUrl } from "../http/BrowserUrl.ts"
import { ServerStartError, startServer, type RunningServer } from "../http/HttpServer.ts"
import type { RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
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
  /** Demo mode: the real provider programs against Planbridge's own scripted model, no login needed. */
  readonly demo: boolean
}

/** The providers to offer: demo mode's (loaded only then), else those the environment configures. */
const providersFor = (demo: boolean) =>
  Effect.acquireRelease(
    Effect.promise(async () =>
      demo
        ? (await import("../demo/DemoProviders.ts")).startDemoProviders()
        : { providers: providersFromEnv(process.env), close: async () => {} }
    ),
    (offered) => Effect.promise(() => offered.close())
  )

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
    const offered = yield* providersFor(input.demo)
    const started = yield* Effect.tryPromise({
      try: async (): Promise<RunningServer> =>
        startServer({
          dataDir: input.dataDir,
          host: input.host,
          port: input.port,
          ...definedFields({ token }),
          ...(input.allowOrigins.length === 0 ? {} : { allowedOrigins: input.allowOrigins }),
          ...(input.allowHosts.length === 0 ? {} : { allowedHosts: input.allowHosts }),
          providers: offered.providers,
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
        `web UI: ${browserUrl(started.url, started.token)} (or: planbridge open --data-dir ${input.dataDir})\n` +
        (input.demo ? describeDemo(offered.providers) : describeOffers(providerOffers(process.env)))
    )
    yield* Effect.promise(() => stopped)
    // Before the providers' model endpoints (demo mode) go away: sessions end against a live model.
    yield* Effect.promise(() => started.close())
    return ExitCode.ok
  }).pipe(Effect.scoped)

const describeDemo = (providers: ReadonlyArray<RegisteredProvider>): string =>
  `demo mode: no login needed; the real programs run against Planbridge's own scripted model on 127.0.0.1\n` +
  `providers:\n${providers.map((p) => `  ${p.adapter.provider.padEnd(10)} offered      ${p.label ?? ""}\n`).join("")}` +
  `scenarios: send a message with "question", "checklist", "plan" or "command" (README.md, "Demo mode")\n`
