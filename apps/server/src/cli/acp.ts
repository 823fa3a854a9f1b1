import { Effect } from "effect"
import { planbridgeAgent } from "../acpAgent/PlanbridgeAgent.ts"
import { LinkRefused, linkToEmbedded, linkToRunning, type ServerLink } from "../acpAgent/ServerLink.ts"
import { stdioMessages } from "../acpAgent/StdioMessages.ts"
import { startServer } from "../http/HttpServer.ts"
import { definedFields } from "../util/definedFields.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { configuredOffer, demoOffer, stopSignal } from "./serve.ts"
import { clientUrlOf, readServerAddress, removeServerAddress, writeServerAddress } from "./serverAddress.ts"
import { clientTokenOf } from "./storedToken.ts"

export interface AcpInput {
  readonly provider: string | undefined
  readonly url: string | undefined
  readonly token: string | undefined
  readonly dataDir: string
  readonly demo: boolean
  readonly credentials: string | undefined
  readonly acpAgents: ReadonlyArray<string>
  readonly version: string
}

const tokenFor = (input: AcpInput): string => {
  if (input.token !== undefined) return input.token
  const found = clientTokenOf(input.dataDir)
  if ("refusal" in found) throw new LinkRefused(`${found.refusal}; or pass --token, or set PLANBRIDGE_TOKEN`)
  return found.token
}

/** The server on the data dir, run by this process: what `serve` would offer, or the demo providers. */
const embedded = (input: AcpInput) => async () => {
  const offer = input.demo ? await demoOffer() : configuredOffer({ ...input, host: "127.0.0.1" }, process.env)
  try {
    const server = await startServer({
      dataDir: input.dataDir,
      host: "127.0.0.1",
      port: 0,
      ...definedFields({ token: input.token ?? process.env.PLANBRIDGE_TOKEN }),
      providers: offer.providers,
      // stdout is the editor's ACP channel: the embedded server's warnings and errors (its own
      // and its sessions') go to stderr, which editors keep as the agent's log.
      logLevel: "warn",
      logDestination: process.stderr
    })
    writeServerAddress(input.dataDir, {
      url: clientUrlOf(server.url),
      pid: process.pid,
      startedAt: new Date().toISOString(),
      tokenSource: input.token === undefined && process.env.PLANBRIDGE_TOKEN === undefined ? "data-dir" : "given"
    })
    return {
      url: server.url,
      token: server.token,
      close: async () => {
        await server.close()
        removeServerAddress(input.dataDir, process.pid)
        await offer.close()
      }
    }
  } catch (error) {
    await offer.close()
    throw error
  }
}

/**
 * `--url`: that server. Otherwise the server running on the data dir when there is one (two
 * servers must not share a data dir), else one started here on it.
 */
const openLink = async (input: AcpInput): Promise<ServerLink> => {
  if (input.url !== undefined) return linkToRunning(input.url, tokenFor(input))
  const recorded = readServerAddress(input.dataDir)
  if (recorded.kind === "running") return linkToRunning(recorded.address.url, tokenFor(input))
  return linkToEmbedded(embedded(input))
}

/**
 * `planbridge acp`: an ACP agent on stdin/stdout until the editor closes stdin or stops it.
 * Nothing but ACP is written to stdout; problems reaching the server go to stderr (exit 1).
 */
export const acp = (input: AcpInput) =>
  Effect.gen(function* () {
    const io = yield* Io
    // SIGINT or SIGTERM (an editor stopping its agent) closes the embedded server gracefully.
    const { stopped } = yield* stopSignal
    const link = yield* Effect.tryPromise({ try: () => openLink(input), catch: (error) => error }).pipe(
      Effect.catch((error) =>
        Effect.sync(() => {
          io.err(
            `planbridge acp: ${error instanceof LinkRefused || error instanceof Error ? error.message : String(error)}\n`
          )
          return undefined
        })
      )
    )
    if (link === undefined) return ExitCode.failed
    const connection = planbridgeAgent({
      client: link.client,
      provider: input.provider,
      version: input.version
    }).connect(stdioMessages(process.stdin, process.stdout))
    yield* Effect.promise(() => Promise.race([connection.closed, stopped]))
    connection.close()
    yield* Effect.promise(() => link.close())
    return ExitCode.ok
  }).pipe(Effect.scoped)
