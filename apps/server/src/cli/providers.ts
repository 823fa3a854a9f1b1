import * as Effect from "effect/Effect"
import { ServerStartError } from "../http/HttpServer.ts"
import { isLoopbackHost } from "../http/Security.ts"
import { ProviderRegistry } from "../orchestration/ProviderRegistry.ts"
import { chooseCredentialsMode } from "../provider/credentials/CredentialsMode.ts"
import { isConfigRefusal } from "../provider/AdapterError.ts"
import { configuredAcpAgents } from "./acpAgents.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { describeStatuses } from "./providerStatus.ts"
import { providersFromEnv } from "./providersFromEnv.ts"

/**
 * `planbridge providers`: the providers `serve` would offer here (same environment, same rule for
 * the credentials mode, loopback assumed), each probed as the server probes it at start-up.
 */
export const providers = (input: {
  readonly credentials: string | undefined
  readonly acpAgents: ReadonlyArray<string>
  readonly dataDir: string
  readonly json: boolean
}) =>
  Effect.gen(function* () {
    const io = yield* Io
    const env = process.env
    let registered
    try {
      const choice = chooseCredentialsMode({ flag: input.credentials, env, loopback: isLoopbackHost("127.0.0.1") })
      registered = providersFromEnv(env, choice.mode, configuredAcpAgents(input.dataDir, input.acpAgents))
    } catch (error) {
      const refused = error instanceof ServerStartError || isConfigRefusal(error)
      if (!refused) throw error
      io.err(`planbridge providers: ${error.message}\n`)
      return ExitCode.usage
    }
    const infos = yield* Effect.gen(function* () {
      return yield* (yield* ProviderRegistry).probed
    }).pipe(Effect.provide(ProviderRegistry.layer(registered)))
    io.out(input.json ? `${JSON.stringify({ providers: infos }, null, 2)}\n` : describeStatuses(infos))
    return ExitCode.ok
  })
