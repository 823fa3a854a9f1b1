import type { RuntimeEvent, ServerFrame } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startDemoProviders, type DemoProviders } from "../../src/demo/DemoProviders.ts"
import { startServer } from "../../src/http/HttpServer.ts"
import { SERVER_STOPPED_MESSAGE } from "../../src/orchestration/ServerStop.ts"
import { STEP_MS } from "../demo/demoRig.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"

/**
 * A graceful stop (`serve` on SIGINT or SIGTERM closes the server) with sessions open: the real
 * Codex app-server waiting on a question, and codex-acp waiting on its question (demo mode,
 * no login). What their threads record is the server's stop, not an agent that stopped
 * (`provider_exited`) or a process that was killed: read back by the next server on the data dir.
 */
type EventFrame = ServerFrame & { type: "event" }

const dirs: Array<string> = []
const newDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `planbridge-stop-${label}-`))
  dirs.push(dir)
  return dir
}
let demo: DemoProviders | undefined
afterAll(async () => {
  await demo?.close()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const okOf = (client: TestClient) => async (command: Parameters<TestClient["command"]>[0]) => {
  const frame = await client.command(command)
  if (frame.type === "error") throw new Error(`${command.type} failed: ${frame.error.code}: ${frame.error.message}`)
  return frame.result as Record<string, unknown>
}

describe("a graceful server stop, as the threads record it", () => {
  it(
    "prompts, requests, turns and sessions closed by the stop say `server_stopped`",
    async () => {
      assertLoopbackOnly()
      demo = await startDemoProviders()
      const dataDir = newDir("data")
      const first = await startServer({
        dataDir,
        host: "127.0.0.1",
        port: 0,
        logLevel: "silent",
        providers: demo.providers
      })
      const client = await connect({ url: first.url, token: first.token })
      const ok = okOf(client)
      const start = async (provider: string, mode: "plan" | "default", text: string, waitFor: string) => {
        const { threadId } = (await ok({ type: "session.start", provider, cwd: newDir("cwd"), mode })) as {
          threadId: string
        }
        await ok({ type: "thread.subscribe", threadId: threadId as never })
        await ok({ type: "turn.start", threadId: threadId as never, text })
        await client.waitFor(isEvent(waitFor, threadId), STEP_MS)
        return threadId
      }
      const codex = await start("codex", "plan", "Ask me questions, then plan.", "user-input.requested")
      // codex-acp 2.6 asks its question as a form elicitation (its `agent` preset has Codex's own
      // guardian review commands, so a command approval never waits on a person there).
      const acp = await start("acp-codex", "plan", "Ask me questions, then plan.", "user-input.requested")
      await client.close()
      // What `serve` does on SIGTERM.
      await first.close()

      const second = await startServer({
        dataDir,
        host: "127.0.0.1",
        port: 0,
        logLevel: "silent",
        providers: demo.providers
      })
      const reader = await connect({ url: second.url, token: second.token })
      const recorded = async (threadId: string): Promise<ReadonlyArray<RuntimeEvent>> => {
        await okOf(reader)({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 })
        await reader.waitFor(isEvent("session.exited", threadId), STEP_MS)
        return reader.frames
          .filter((f): f is EventFrame => f.type === "event" && f.threadId === threadId)
          .map((f) => f.event)
      }
      const payloads = (events: ReadonlyArray<RuntimeEvent>, type: string) =>
        events.filter((e) => e.type === type).map((e) => e.payload)
      try {
        const byThread = new Map<string, ReadonlyArray<RuntimeEvent>>()
        for (const threadId of [codex, acp]) byThread.set(threadId, await recorded(threadId))
        for (const [threadId, events] of byThread) {
          const exits = payloads(events, "session.exited")
          expect(exits, threadId).toHaveLength(1)
          expect(exits[0]).toMatchObject({
            exitKind: "server_stopped",
            message: expect.stringContaining(SERVER_STOPPED_MESSAGE)
          })
          expect(payloads(events, "turn.completed").at(-1)).toMatchObject({
            status: "interrupted",
            error: { code: "server_stopped", message: SERVER_STOPPED_MESSAGE }
          })
          expect(JSON.stringify(events)).not.toContain("provider_exited")
        }
        expect(payloads(byThread.get(codex)!, "user-input.resolved")).toEqual([
          expect.objectContaining({ resolution: "server_stopped", reason: SERVER_STOPPED_MESSAGE })
        ])
        expect(payloads(byThread.get(acp)!, "request.resolved")).toEqual([
          expect.objectContaining({ resolution: "server_stopped" })
        ])
      } finally {
        await reader.close()
        await second.close()
      }
    },
    STEP_MS * 4
  )
})
