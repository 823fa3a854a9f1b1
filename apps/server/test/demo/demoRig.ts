import type { Command, OperatingMode, ServerFrame } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startDemoProviders, type DemoProviders } from "../../src/demo/DemoProviders.ts"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"

/**
 * The server as `planbridge serve --demo` runs it (the demo providers, nothing else), and a real
 * WebSocket client that plays a scenario: start a session, send the message, answer.
 */
export interface DemoRig {
  readonly server: RunningServer
  readonly demo: DemoProviders
  /** The server's data dir (its token, for the CLI). */
  readonly dataDir: string
  readonly client: TestClient
  /** A session of `provider` in `mode`, subscribed; returns its thread id and its private cwd. */
  readonly session: (provider: string, mode: OperatingMode) => Promise<{ threadId: string; cwd: string }>
  readonly ok: (command: Command) => Promise<Record<string, unknown>>
  /** The events of one thread received so far, in order. */
  readonly events: (threadId: string) => ReadonlyArray<ServerFrame & { type: "event" }>
  readonly waitFor: (type: string, threadId: string, timeoutMs?: number) => Promise<ServerFrame & { type: "event" }>
  readonly close: () => Promise<void>
}

/** Real programs under load on a shared 2-core machine: generous. */
export const STEP_MS = 90_000

export const startDemoRig = async (): Promise<DemoRig> => {
  assertLoopbackOnly()
  const dirs: Array<string> = [mkdtempSync(join(tmpdir(), "planbridge-demo-data-"))]
  const demo = await startDemoProviders()
  const server = await startServer({
    dataDir: dirs[0]!,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: demo.providers
  })
  const client = await connect({ url: server.url, token: server.token })
  const ok = async (command: Command) => {
    const frame = await client.command(command)
    if (frame.type === "error") throw new Error(`${command.type} failed: ${frame.error.code}: ${frame.error.message}`)
    return frame.result as Record<string, unknown>
  }
  return {
    server,
    demo,
    dataDir: dirs[0]!,
    client,
    ok,
    session: async (provider, mode) => {
      const cwd = mkdtempSync(join(tmpdir(), "planbridge-demo-cwd-"))
      dirs.push(cwd)
      const { threadId } = (await ok({ type: "session.start", provider, cwd, mode })) as { threadId: string }
      await ok({ type: "thread.subscribe", threadId: threadId as never })
      return { threadId, cwd }
    },
    events: (threadId) => client.frames.filter((f) => f.type === "event" && f.threadId === threadId) as never,
    waitFor: (type, threadId, timeoutMs = STEP_MS) => client.waitFor(isEvent(type, threadId), timeoutMs),
    close: async () => {
      await client.close()
      await server.close()
      await demo.close()
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** The event types of a thread in order, without the streaming noise whose count may vary. */
export const shapeOf = (events: ReadonlyArray<ServerFrame & { type: "event" }>): ReadonlyArray<string> =>
  events
    .map((f) => f.event.type)
    .filter((t) => t !== "content.delta" && t !== "plan.proposed.delta" && t !== "item.updated")
