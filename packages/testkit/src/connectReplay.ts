import { PlanbridgeClient, type WebSocketConstructor } from "@planbridge/client"
import NodeWebSocket from "ws"
import type { ReplayServer } from "./ReplayServer.ts"

/**
 * `ws`'s client, for Node 20 (no global WebSocket). Its declared overloads also take a `null`
 * address (server-side sockets), which the client's constructor type does not; the client only
 * ever calls `new WebSocket(url)`, which `ws` implements as the browser's.
 */
const nodeWebSocket = NodeWebSocket as unknown as WebSocketConstructor

/** A client on the replay server: the global WebSocket where there is one (browsers, Node ≥ 22), else `ws`'s. */
export const connectReplay = (
  server: Pick<ReplayServer, "url" | "token">,
  options: { readonly WebSocket?: WebSocketConstructor } = {}
): Promise<PlanbridgeClient> =>
  PlanbridgeClient.connect({
    url: server.url,
    token: server.token,
    clientName: "planbridge-testkit",
    // Without one given, the client's default (the global one) where it exists.
    ...(options.WebSocket !== undefined
      ? { WebSocket: options.WebSocket }
      : "WebSocket" in globalThis
        ? {}
        : { WebSocket: nodeWebSocket })
  })
