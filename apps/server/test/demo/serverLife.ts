import type { ServerFrame, ThreadSnapshot } from "@planbridge/contracts"
import { expect } from "vitest"
import { startServer } from "../../src/http/HttpServer.ts"
import type { RegisteredProvider } from "../../src/orchestration/ProviderRegistry.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"
import { STEP_MS } from "./demoRig.ts"

export type EventFrame = ServerFrame & { type: "event" }

/**
 * One life of the server on `dataDir` (a restart test starts several on one data dir): started
 * with `providers`, one client connected.
 */
export const serverLife = async (dataDir: string, providers: ReadonlyArray<RegisteredProvider>) => {
  const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, logLevel: "silent", providers })
  const client = await connect({ url: server.url, token: server.token })
  const ok = async (command: Parameters<TestClient["command"]>[0]) => {
    const frame = await client.command(command)
    if (frame.type === "error") throw new Error(`${command.type} failed: ${frame.error.code}: ${frame.error.message}`)
    return frame.result as Record<string, unknown>
  }
  const waitEvent = (type: string, threadId: string, after = 0) =>
    client.waitFor((f): f is EventFrame => isEvent(type, threadId)(f) && f.seq > after, STEP_MS)
  /** The server's stored snapshot of the thread (`GET /api/threads/:id`). */
  const stored = async (threadId: string): Promise<ThreadSnapshot> => {
    const res = await fetch(`${server.url}/api/threads/${threadId}`, {
      headers: { authorization: `Bearer ${server.token}` }
    })
    expect(res.status).toBe(200)
    return (await res.json()) as ThreadSnapshot
  }
  const close = async () => {
    await client.close()
    await server.close()
  }
  return { client, ok, waitEvent, stored, close }
}

export type ServerLife = Awaited<ReturnType<typeof serverLife>>
