import { Effect } from "effect"
import { browserUrl } from "../http/BrowserUrl.ts"
import { ServerStartError, startServer, type RunningServer } from "../http/HttpServer.ts"
import type { RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { describeOffers, providerOffers } from "./providerOffers.ts"
import { claudeInstalled, providersFromEnv } from "./providersFromEnv.ts"
import { isLoopbackHost } from "../http/Security.ts"
import { configuredAcpAgents } from "./acpAgents.ts"
import { ProviderRegistry } from "../orchestration/ProviderRegistry.ts"
import { codexInstalled } from "../provider/codex/CodexLaunch.ts"
import { isConfigRefusal } from "../provider/AdapterError.ts"
import { chooseCredentialsMode } from "../provider/credentials/CredentialsMode.ts"
import { subscriptionOverrides } from "../provider/credentials/UserEnvironment.ts"
import { describeStatuses } from "./providerStatus.ts"
import { definedFields } from "../util/definedFields.ts"
import { storeOption } from "../persistence/StoreSelection.ts"
import { redactUrl } from "../persistence/postgres/StoreUrl.ts"
import { clientUrlOf, removeServerAddress, writeServerAddress } from "./serverAddress.ts"
import { waitPolicyOf } from "./waitPolicyFlag.ts"

export interface ServeInput {
  readonly host: string
  readonly port: number
  readonly token: string | undefined
  readonly allowOrigins: ReadonlyArray<string>
  readonly allowHosts: ReadonlyArray<string>
  readonly logLevel: "silent" | "error" | "warn" | "info" | "debug"
  readonly dataDir: string
  /** `--store URL` (PostgreSQL), else PLANBRIDGE_STORE, else SQLite in the data dir. */
  readonly store: string | undefined
  /** Demo mode: the real provider programs against Planbridge's own scripted model, no login needed. */
  readonly demo: boolean
  /** `--credentials user|isolated`; default from PLANBRIDGE_CREDENTIALS, the base URLs and the host. */
  readonly credentials: string | undefined
  /** `--acp-agent NAME=COMMAND`, repeatable; added to `<data dir>/acp-agents.json`'s agents. */
  readonly acpAgents: ReadonlyArray<string>
  /** `--replay DIR`: only the recorded transcripts in DIR, each a provider that replays it. */
  readonly replay: string | undefined
  readonly replayStrict: boolean
  readonly replaySpeed: number
  /** `--wait-policy`, as `WaitPolicyText` checked it. */
  readonly waitPolicy: string
}

/** Where the log is, when it is not the data dir's SQLite file (the password never printed). */
const storeNote = (store: string | undefined): string => (store === undefined ? "" : `, store ${redactUrl(store)}`)

/** What `serve` offers, said at start-up, and whether the user's own logins are probed. */
export interface Offer {
  readonly providers: ReadonlyArray<RegisteredProvider>
  readonly preamble: string
  readonly user: boolean
  readonly close: () => Promise<void>
}

/** Demo mode's providers (loaded only then): the real programs against our own scripted model. */
export const demoOffer = async (): Promise<Offer> => {
  const demo = await (await import("../demo/DemoProviders.ts")).startDemoProviders()
  return { providers: demo.providers, preamble: describeDemo(demo.providers), user: false, close: demo.close }
}

/** Replay mode's providers (loaded only then): the recordings in the directory, no program started. */
const replayOffer = async (input: ServeInput & { readonly replay: string }): Promise<Offer> => {
  const { loadReplayDirectory, replayProviders } = await import("../provider/replay/ReplayDirectory.ts")
  const recordings = await Effect.runPromise(
    Effect.catchTag(loadReplayDirectory(input.replay), "AdapterError", (e) =>
      Effect.fail(new ServerStartError({ message: `--replay: ${e.message}`, cause: e }))
    )
  )
  const options = { strict: input.replayStrict, speed: input.replaySpeed }
  const preamble =
    `replay mode: ${recordings.length} recorded sessions from ${input.replay} ` +
    `(${options.strict ? "strict: a different answer is refused" : "a different answer is accepted with a warning"}, ` +
    `speed ${options.speed}); no provider program runs\n` +
    `providers:\n${recordings.map((r) => `  ${r.name.padEnd(24)} ${r.recordedProvider.padEnd(10)} ${r.path}\n`).join("")}`
  return { providers: replayProviders(recordings, options), preamble, user: false, close: async () => {} }
}

/** The providers the credentials mode, the environment and the configured ACP agents give. */
export const configuredOffer = (
  input: Pick<ServeInput, "credentials" | "host" | "dataDir" | "acpAgents">,
  env: NodeJS.ProcessEnv
): Offer => {
  const choice = chooseCredentialsMode({ flag: input.credentials, env, loopback: isLoopbackHost(input.host) })
  const user = choice.mode === "user"
  const warnings = user ? subscriptionOverrides(env).map((line) => `warning: ${line}\n`) : []
  const installed = { codex: codexInstalled(), claude: claudeInstalled() }
  const acpAgents = configuredAcpAgents(input.dataDir, input.acpAgents)
  const preamble =
    `credentials: ${choice.mode} (${choice.why})\n` +
    warnings.join("") +
    describeOffers(providerOffers(env, choice.mode, installed)) +
    acpAgents.map((a) => `  ${a.name.padEnd(7)} ${"offered".padEnd(12)} ACP agent \`${a.command}\`\n`).join("")
  return { providers: providersFromEnv(env, choice.mode, acpAgents), preamble, user, close: async () => {} }
}

/**
 * SIGINT or SIGTERM, listened for from before the server starts: a signal that arrives while it
 * starts, or right after the start-up line, still closes it gracefully instead of killing it.
 */
export const stopSignal = Effect.acquireRelease(
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

/** The environment variable that sets a replica's session lease time (PostgreSQL), in ms. */
export const LEASE_TTL_ENV = "PLANBRIDGE_LEASE_TTL_MS"

/** PLANBRIDGE_LEASE_TTL_MS as a number of ms (500 … 600000), or undefined for the default. */
export const leaseTtlFromEnv = (env: NodeJS.ProcessEnv): number | undefined => {
  const value = env[LEASE_TTL_ENV]
  if (value === undefined || value === "") return undefined
  const ms = Number(value)
  if (!Number.isInteger(ms) || ms < 500 || ms > 600_000)
    throw new ServerStartError({
      message: `${LEASE_TTL_ENV} must be a whole number of milliseconds from 500 to 600000, not '${value}'`
    })
  return ms
}

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
      try: async (): Promise<{ readonly server: RunningServer; readonly offer: Offer }> => {
        const { replay } = input
        if (replay === undefined && input.replayStrict)
          throw new ServerStartError({ message: "--replay-strict needs --replay DIR" })
        if (replay !== undefined && input.demo)
          throw new ServerStartError({ message: "--replay and --demo exclude each other" })
        const offer =
          replay !== undefined
            ? await replayOffer({ ...input, replay })
            : input.demo
              ? await demoOffer()
              : configuredOffer(input, process.env)
        try {
          const server = await startServer({
            dataDir: input.dataDir,
            ...definedFields({ store: storeOption(input.store) }),
            host: input.host,
            port: input.port,
            ...definedFields({ token }),
            ...(input.allowOrigins.length === 0 ? {} : { allowedOrigins: input.allowOrigins }),
            ...(input.allowHosts.length === 0 ? {} : { allowedHosts: input.allowHosts }),
            providers: offer.providers,
            logLevel: input.logLevel,
            ...definedFields({ leaseTtlMs: leaseTtlFromEnv(process.env) }),
            waitPolicy: waitPolicyOf(input.waitPolicy)
          })
          return { server, offer }
        } catch (error) {
          await offer.close()
          throw error
        }
      },
      catch: (error) => error
    }).pipe(
      Effect.catchIf(
        (error): error is Error => error instanceof ServerStartError || isConfigRefusal(error),
        (error) => Effect.sync(() => io.err(`planbridge serve: ${error.message}\n`)).pipe(Effect.as(undefined))
      ),
      Effect.orDie
    )
    if (started === undefined) return ExitCode.usage
    const { server, offer } = started
    // Where it listens, for every other command on this data dir (`open`, `prompts`, `token`,
    // `rebuild`); removed again once it stopped cleanly, below.
    try {
      writeServerAddress(input.dataDir, {
        url: clientUrlOf(server.url),
        pid: process.pid,
        startedAt: new Date().toISOString(),
        tokenSource: token === undefined ? "data-dir" : "given"
      })
    } catch (error) {
      io.err(
        `planbridge serve: warning: the address is not recorded in the data dir (${String(error)}); other commands need --url ${server.url}\n`
      )
    }
    // `npx`: the bin is in the checkout's node_modules/.bin (after `npm ci`), not on PATH.
    io.out(
      `planbridge listening on ${server.url} (data dir ${input.dataDir}${storeNote(storeOption(input.store))}); ` +
        `recovered ${server.recovery.prompts} prompts, ${server.recovery.sessions} sessions; ` +
        `token: npx planbridge token --data-dir ${input.dataDir}\n` +
        `web UI: ${browserUrl(server.url, server.token)} (or: npx planbridge open --data-dir ${input.dataDir})\n` +
        offer.preamble
    )
    // The user's logins are known once the probes answered: said when they have.
    if (offer.user) {
      void server.runtime
        .runPromise(
          Effect.gen(function* () {
            return yield* (yield* ProviderRegistry).probed
          })
        )
        .then(
          (infos) => io.out(describeStatuses(infos)),
          // Stopped before the probes answered: the server's runtime is gone, and so is the question.
          () => undefined
        )
    }
    yield* Effect.promise(() => stopped)
    // Before the providers' model endpoints (demo mode) go away: sessions end against a live model.
    yield* Effect.promise(() => server.close())
    removeServerAddress(input.dataDir, process.pid)
    yield* Effect.promise(() => offer.close())
    return ExitCode.ok
  }).pipe(Effect.scoped)

const describeDemo = (providers: ReadonlyArray<RegisteredProvider>): string =>
  `demo mode: no login needed; the real programs run against Planbridge's own scripted model on 127.0.0.1\n` +
  `providers:\n${providers.map((p) => `  ${p.adapter.provider.padEnd(10)} offered      ${p.label ?? ""}\n`).join("")}` +
  `scenarios: send a message with "question", "checklist", "plan" or "command" (README.md, "Demo mode")\n`
