import type { ServerFrame } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { makeAcpAdapter } from "../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../src/provider/acp/profiles/cursor.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"

/**
 * The server with the Cursor profile over ACP, against the scripted Cursor-profile agent (Cursor's
 * own binary cannot run here): mode switch, todo list, `cursor/ask_question` answered with
 * `userInput.respond`, `cursor/create_plan` accepted with `plan.decide`, a permission granted
 * with `request.respond`; the agent echoes every answer it received.
 */
const root = fileURLToPath(new URL("../../../../", import.meta.url))
let server: RunningServer
const dirs: Array<string> = []

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "planbridge-e2e-cursor-"))
  dirs.push(dataDir)
  const profile = cursorProfile({
    command: resolve(root, "node_modules/.bin/tsx"),
    args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
  })
  server = await startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: [
      {
        adapter: makeAcpAdapter(profile, {
          env: { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
        }),
        capabilities: profile.capabilities
      }
    ]
  })
})
afterAll(async () => {
  await server?.close()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

const ok = async (client: TestClient, command: Parameters<TestClient["command"]>[0]) => {
  const reply = await client.command(command)
  if (reply.type === "error") throw new Error(`${command.type}: ${reply.error.code}: ${reply.error.message}`)
  return reply.result as Record<string, unknown>
}

describe("server end to end with the Cursor profile", () => {
  it("question, plan and permission answered over WebSocket reach the agent", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "planbridge-e2e-cursor-cwd-"))
    dirs.push(cwd)
    const client = await connect({ url: server.url, token: server.token })
    try {
      const { threadId } = (await ok(client, { type: "session.start", provider: "cursor", cwd, mode: "default" })) as {
        threadId: string
      }
      await ok(client, { type: "thread.subscribe", threadId: threadId as never })
      await ok(client, { type: "mode.set", threadId: threadId as never, mode: "plan" })
      await client.waitFor(
        (f): f is ServerFrame & { type: "event" } =>
          isEvent("mode.changed", threadId)(f) && f.event.type === "mode.changed" && f.event.payload.mode === "plan"
      )
      await ok(client, { type: "turn.start", threadId: threadId as never, text: "SCENARIO:FULL make hello.txt" })

      const requested = await client.waitFor(isEvent("user-input.requested", threadId))
      if (requested.event.type !== "user-input.requested") throw new Error("unreachable")
      const prompt = requested.event.payload.prompt
      expect(prompt.questions.map((q) => [q.id, q.multiSelect])).toEqual([
        ["lang", false],
        ["extras", true]
      ])
      await ok(client, {
        type: "userInput.respond",
        promptId: prompt.promptId,
        answers: [
          { questionId: "lang", selectedOptionIds: ["ts"] },
          { questionId: "extras", selectedOptionIds: ["tests", "ci"] }
        ] as never,
        clientRequestId: "cursor-answer"
      })

      const plan = await client.waitFor(isEvent("plan.proposed.completed", threadId))
      if (plan.event.type !== "plan.proposed.completed") throw new Error("unreachable")
      await ok(client, {
        type: "plan.decide",
        threadId: threadId as never,
        planId: plan.event.payload.planId,
        decision: "approved",
        clientRequestId: "cursor-plan"
      })

      const permission = await client.waitFor(
        (f): f is ServerFrame & { type: "event" } =>
          isEvent("request.opened", threadId)(f) &&
          f.event.type === "request.opened" &&
          f.event.payload.requestKind === "approval"
      )
      if (permission.event.type !== "request.opened") throw new Error("unreachable")
      expect(permission.event.payload.options.map((o) => o.id)).toEqual(["allow-once", "allow-always", "reject-once"])
      await ok(client, {
        type: "request.respond",
        requestId: permission.event.payload.requestId,
        optionId: "allow-once" as never,
        clientRequestId: "cursor-permission"
      })
      await client.waitFor(isEvent("turn.completed", threadId))

      // A second answer gets `already_resolved` with one message, whether the store noticed (the
      // prompt, the request) or the session did (the plan: `plan.decide` has no stored pre-check).
      const late = [
        await client.command({
          type: "userInput.respond",
          promptId: prompt.promptId,
          answers: [{ questionId: "lang", selectedOptionIds: ["py"] }] as never,
          clientRequestId: "cursor-answer-late"
        }),
        await client.command({
          type: "request.respond",
          requestId: permission.event.payload.requestId,
          optionId: "reject-once" as never,
          clientRequestId: "cursor-permission-late"
        }),
        await client.command({
          type: "plan.decide",
          threadId: threadId as never,
          planId: plan.event.payload.planId,
          decision: "rejected",
          clientRequestId: "cursor-plan-late"
        })
      ]
      const alreadyResolved = {
        code: "already_resolved",
        message:
          "already resolved: another answer came first, or it was cancelled or ended with its turn; the thread shows how it was resolved"
      }
      expect(late.map((f) => f.type === "error" && f.error)).toEqual([
        alreadyResolved,
        alreadyResolved,
        alreadyResolved
      ])

      // The agent echoed exactly what it received, in Cursor's documented response shapes.
      const snapshot = (await (
        await fetch(`${server.url}/api/threads/${threadId}`, { headers: { authorization: `Bearer ${server.token}` } })
      ).json()) as {
        mode: string
        items: Array<{ itemType: string; text: string }>
        latestPlan: { plan: { steps: Array<{ step: string; status: string }> } } | null
        proposedPlans: Array<{ status: string }>
        prompts: Array<{ resolution: string }>
        requests: Array<{ status: string; optionId: string | null }>
      }
      const said = snapshot.items
        .filter((i) => i.itemType === "assistant_message")
        .map((i) => i.text)
        .join("")
      expect(said).toContain(
        `RECEIVED cursor/ask_question {"outcome":{"outcome":"answered","answers":[{"questionId":"lang","selectedOptionIds":["ts"]},{"questionId":"extras","selectedOptionIds":["tests","ci"]}]}}`
      )
      expect(said).toContain(`RECEIVED cursor/create_plan {"outcome":{"outcome":"accepted"}}`)
      expect(said).toContain(
        `RECEIVED session/request_permission {"outcome":{"outcome":"selected","optionId":"allow-once"}}`
      )
      expect(snapshot.mode).toBe("plan")
      expect(snapshot.latestPlan?.plan.steps.map((s) => s.status)).toEqual(["completed", "inProgress", "pending"])
      expect(snapshot.proposedPlans.map((p) => p.status)).toEqual(["approved"])
      expect(snapshot.prompts.map((p) => p.resolution)).toEqual(["answered"])
      expect(snapshot.requests.filter((r) => r.optionId === "allow-once")).toHaveLength(1)
    } finally {
      await client.close()
    }
  })

  it("a session whose agent crashed is no longer live: the thread stays readable, commands say session_not_live", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "planbridge-e2e-cursor-cwd-"))
    dirs.push(cwd)
    const client = await connect({ url: server.url, token: server.token })
    try {
      const { threadId } = (await ok(client, { type: "session.start", provider: "cursor", cwd, mode: "default" })) as {
        threadId: string
      }
      await ok(client, { type: "thread.subscribe", threadId: threadId as never })
      const live = async () =>
        ((await ok(client, { type: "threads.list" })).threads as Array<{ threadId: string; live: boolean }>).find(
          (t) => t.threadId === threadId
        )?.live
      expect(await live()).toBe(true)
      await ok(client, { type: "turn.start", threadId: threadId as never, text: "SCENARIO:CRASH" })
      const exited = await client.waitFor(isEvent("session.exited", threadId))
      expect(exited.event.type === "session.exited" && exited.event.payload.exitKind).toBe("crashed")
      // Retired right after the exit is persisted; the event may reach us a moment before that.
      const deadline = Date.now() + 5_000
      while ((await live()) !== false && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
      expect(await live()).toBe(false)
      const refused = await client.command({ type: "turn.start", threadId: threadId as never, text: "again" })
      expect(refused.type === "error" && refused.error.code).toBe("session_not_live")
    } finally {
      await client.close()
    }
  })
})
