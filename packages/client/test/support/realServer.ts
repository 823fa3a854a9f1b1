import type { RuntimeEvent, ThreadSnapshot } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import WebSocket from "ws"
import { startServer, type RunningServer, type ServerOptions } from "../../../../apps/server/src/http/HttpServer.ts"
import { RuntimeIngestion } from "../../../../apps/server/src/orchestration/RuntimeIngestion.ts"
import type { WebSocketConstructor } from "../../src/index.ts"

/** A real `planbridge` server in this process, and what the client tests do to it. */

/** Temporary directories, removed by `removeAll` (call it in `afterAll`). */
export const tempDirs = () => {
  const dirs: Array<string> = []
  return {
    make: (label: string) => {
      const dir = mkdtempSync(join(tmpdir(), `planbridge-client-${label}-`))
      dirs.push(dir)
      return dir
    },
    removeAll: () => dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
  }
}

/** `ws`'s WebSocket (Node 20 has no global one). */
export const Ws = WebSocket as unknown as WebSocketConstructor

export const start = (dataDir: string, extra: Partial<ServerOptions> = {}) =>
  startServer({ dataDir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [], ...extra })

/** Appends events through the server's own ingestion (persisted, then published). */
export const ingest = (server: RunningServer, events: ReadonlyArray<RuntimeEvent>) =>
  server.runtime.runPromise(
    Effect.gen(function* () {
      return yield* (yield* RuntimeIngestion).ingestAll(events)
    })
  )

export const serverSnapshot = async (server: RunningServer, threadId: string): Promise<ThreadSnapshot> => {
  const res = await fetch(`${server.url}/api/threads/${threadId}`, {
    headers: { authorization: `Bearer ${server.token}` }
  })
  return (await res.json()) as ThreadSnapshot
}

/** Drops every client's connection without a close frame, as a network failure or a crash does (1006). */
export const dropConnections = (server: RunningServer): number => {
  let dropped = 0
  for (const client of server.app.websocketServer.clients) {
    client.terminate()
    dropped++
  }
  return dropped
}

let n = 0
export const delta = (threadId: string, text: string): RuntimeEvent =>
  ({
    eventId: `ev-${n++}`,
    provider: "codex",
    threadId,
    turnId: "turn-1",
    itemId: "item-1",
    createdAt: new Date(Date.UTC(2026, 10, 30, 12) + n).toISOString(),
    type: "content.delta",
    payload: { streamKind: "assistant_text", delta: text }
  }) as unknown as RuntimeEvent

export const started = (threadId: string): RuntimeEvent =>
  ({
    eventId: `ev-${n++}`,
    provider: "codex",
    threadId,
    createdAt: new Date(Date.UTC(2026, 10, 30, 12) + n).toISOString(),
    type: "session.started",
    payload: { resumed: false }
  }) as unknown as RuntimeEvent

/** Resolves when `check` holds, re-checked on every change `subscribe` reports. */
export const until = (subscribe: (listener: () => void) => () => void, check: () => boolean, ms = 20_000) =>
  new Promise<void>((resolve, reject) => {
    if (check()) return resolve()
    const timer = setTimeout(() => (stop(), reject(new Error("condition not reached in time"))), ms)
    const stop = subscribe(() => {
      if (check()) {
        clearTimeout(timer)
        stop()
        resolve()
      }
    })
  })
