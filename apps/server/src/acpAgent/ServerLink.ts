import { PlanbridgeClient } from "@planbridge/client"
import { NodeWebSocket } from "./NodeWebSocket.ts"

/**
 * The Planbridge server `planbridge acp` is a client of: the running one at a URL, or one it
 * runs itself on a data dir (embedded) for as long as the editor keeps it. Either way the agent
 * speaks the client protocol to it over a loopback WebSocket, so an embedded server is the same
 * server the web UI and `planbridge prompts` reach while it runs.
 */
export interface ServerLink {
  readonly client: PlanbridgeClient
  /** Where the server listens (for messages; never carries the token). */
  readonly url: string
  /** Closes the connection, then the embedded server if there is one. */
  readonly close: () => Promise<void>
}

const connect = (url: string, token: string): Promise<PlanbridgeClient> =>
  PlanbridgeClient.connect({ url, token, WebSocket: NodeWebSocket, clientName: "planbridge-acp" })

/** Why `planbridge acp` has no server to talk to; said on stderr (stdout is the editor's). */
export class LinkRefused {
  readonly _tag = "LinkRefused"
  constructor(readonly message: string) {}
}

/** How long a server at `--url` has to answer at all before `planbridge acp` gives up. */
const REACH_TIMEOUT_MS = 10_000

/**
 * A link to a running server, with the token from `--token`, the environment or its data dir.
 * The server is asked for its (token-free) web page first: the client library reconnects for
 * ever to a server that is away, which is right once connected, but an agent whose server never
 * answered must say so and exit instead of leaving the editor waiting.
 */
export const linkToRunning = async (url: string, token: string): Promise<ServerLink> => {
  try {
    await fetch(new URL("/", url), { signal: AbortSignal.timeout(REACH_TIMEOUT_MS) })
  } catch (error) {
    throw new LinkRefused(
      `no Planbridge server answers at ${url} (${error instanceof Error ? error.message : String(error)})`
    )
  }
  try {
    const client = await connect(url, token)
    return { client, url, close: async () => client.close() }
  } catch (error) {
    throw new LinkRefused(
      `the server at ${url} refused the connection: ${error instanceof Error ? error.message : String(error)}`
    )
  }
}

export interface EmbeddedServer {
  readonly url: string
  readonly token: string
  readonly close: () => Promise<void>
}

/**
 * A link to a server this process starts on the data dir: on 127.0.0.1, a free port, logging
 * to stderr only (stdout is the editor's ACP channel), its address recorded for the other commands.
 */
export const linkToEmbedded = async (start: () => Promise<EmbeddedServer>): Promise<ServerLink> => {
  const server = await start()
  try {
    const client = await connect(server.url, server.token)
    return {
      client,
      url: server.url,
      close: async () => {
        client.close()
        await server.close()
      }
    }
  } catch (error) {
    await server.close()
    throw error
  }
}
