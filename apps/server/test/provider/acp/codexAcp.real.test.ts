import { ThreadId } from "@planbridge/contracts"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { codexAcpProfile } from "../../../src/provider/acp/profiles/codexAcp.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import {
  functionCallOutputs,
  startMockResponsesModel,
  type MockResponsesModel
} from "../../support/mockResponsesModel.ts"
import { openSession, recording, replayOfLive, run, type OpenSession } from "./harness.ts"
import { writeCodexHome } from "./peers.ts"

const root = resolve(import.meta.dirname, "../../../../..")
const threadId = ThreadId.make("thread-codex-acp")
const { recorder, options } = recording("acp-codex", threadId)

/** Pids of live processes whose environment names this CODEX_HOME (the wrapper and its binary). */
const processesWithHome = (home: string): ReadonlyArray<number> =>
  readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return []
    try {
      return readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`CODEX_HOME=${home}`)
        ? [Number(entry)]
        : []
    } catch {
      return []
    }
  })

const plan = (statuses: ReadonlyArray<string>) => ({
  plan: [
    { step: "Inspect the workspace", status: statuses[0] },
    { step: "Create hello.txt", status: statuses[1] },
    { step: "Report back", status: statuses[2] }
  ]
})

describe("ACP client against the real codex-acp 0.16.0 (scripted Responses model on loopback)", () => {
  let model: MockResponsesModel
  let home: string
  let work: string
  let open: OpenSession

  beforeAll(async () => {
    assertLoopbackOnly()
    model = await startMockResponsesModel()
    home = mkdtempSync(join(tmpdir(), "planbridge-codex-acp-"))
    work = join(home, "work")
    mkdirSync(work)
    writeCodexHome(home, model.baseUrl)
    const adapter = makeAcpAdapter(codexAcpProfile({ command: resolve(root, "node_modules/.bin/codex-acp") }), {
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, MOCK_KEY: "mock-key" },
      ...options
    })
    open = await openSession(adapter, { threadId, cwd: work, mode: "default" })
  })
  afterAll(async () => {
    await open?.close()
    await model?.close()
    if (home !== undefined) rmSync(home, { recursive: true, force: true })
  })

  it("maps codex-acp's approval presets to canonical modes and reflects a switch", async () => {
    const { log, session } = open
    const configured = log.ofType("session.configured")[0]
    // Outside a git repository codex-acp starts read-only: still an asking, default mode.
    expect(configured?.payload).toMatchObject({ mode: "default", nativeMode: "read-only", model: "gpt-5.4" })
    expect(configured?.payload.capabilities).toMatchObject({
      supportsPlanMode: false,
      supportsAskMode: false,
      supportsModeSwitching: true,
      supportsStructuredPlanUpdates: false
    })
    await run(session.setMode("execute"))
    expect((await log.waitFor("mode.changed", (e) => e.payload.mode === "execute")).payload.nativeMode).toBe(
      "full-access"
    )
    await run(session.setMode("default"))
    expect((await log.waitFor("mode.changed", (e) => e.payload.nativeMode === "auto")).payload.mode).toBe("default")
  })

  it("turns update_plan into plan snapshots and round-trips a command permission", async () => {
    const { log, session } = open
    const from = log.events.length
    model.script(
      {
        output: [
          { type: "text", text: "Planning first." },
          {
            type: "function_call",
            name: "update_plan",
            arguments: plan(["completed", "in_progress", "pending"]),
            callId: "call_plan_1"
          }
        ]
      },
      {
        output: [
          {
            type: "function_call",
            name: "exec_command",
            arguments: {
              cmd: "echo hello > hello.txt",
              sandbox_permissions: "require_escalated",
              justification: "Write hello.txt for the test"
            },
            callId: "call_exec_1"
          }
        ]
      },
      {
        output: [
          {
            type: "function_call",
            name: "update_plan",
            arguments: plan(["completed", "completed", "completed"]),
            callId: "call_plan_2"
          }
        ]
      },
      { output: [{ type: "text", text: "Done: created hello.txt." }] }
    )
    const turnId = await run(session.startTurn({ text: "please create hello.txt" }))
    const opened = await log.waitFor("request.opened", () => true, { from })
    expect(opened.payload.requestKind).toBe("approval")
    expect(opened.payload.native.method).toBe("session/request_permission")
    const approve = opened.payload.options.find((o) => o.kind === "allow_once")
    expect(approve).toBeDefined()
    await run(session.respondToRequest(opened.payload.requestId, approve!.id))
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    expect(completed.payload.status).toBe("completed")

    const turnEvents = log.events.slice(from)
    const snapshots = turnEvents.flatMap((e) => (e.type === "turn.plan.updated" ? [e.payload.plan] : []))
    expect(snapshots.length).toBeGreaterThanOrEqual(2)
    expect(snapshots[0]?.steps).toEqual([
      { step: "Inspect the workspace", status: "completed", priority: "medium" },
      { step: "Create hello.txt", status: "inProgress", priority: "medium" },
      { step: "Report back", status: "pending", priority: "medium" }
    ])
    expect(snapshots.at(-1)?.steps.map((s) => s.status)).toEqual(["completed", "completed", "completed"])
    expect(turnEvents.filter((e) => e.type === "capabilities.changed")).toHaveLength(1)
    expect(turnEvents.find((e) => e.type === "request.resolved")?.payload).toMatchObject({
      requestId: opened.payload.requestId,
      resolution: "responded",
      optionId: approve!.id
    })
    // The approval really reached Codex: the command ran and its output went back to the model.
    expect(existsSync(join(work, "hello.txt"))).toBe(true)
    const outputs = model.responseRequests().flatMap((r) => functionCallOutputs(r))
    expect(outputs.some((o) => o.callId === "call_exec_1")).toBe(true)
    const command = turnEvents.find((e) => e.type === "item.completed" && e.payload.itemType === "command")
    expect(command).toMatchObject({ payload: { status: "completed", toolName: "execute" } })
    expect(log.assistantText(turnId)).toContain("Done: created hello.txt.")
  })

  it("cancels a turn whose permission is pending: the client answers cancelled, the turn is interrupted", async () => {
    const { log, session } = open
    const from = log.events.length
    model.script({
      output: [
        {
          type: "function_call",
          name: "exec_command",
          arguments: {
            cmd: "echo again > again.txt",
            sandbox_permissions: "require_escalated",
            justification: "Write again.txt"
          },
          callId: "call_exec_2"
        }
      ]
    })
    const turnId = await run(session.startTurn({ text: "write again.txt" }))
    const opened = await log.waitFor("request.opened", () => true, { from })
    await run(session.interrupt())
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    expect(completed.payload.status).toBe("interrupted")
    expect(log.events.slice(from).find((e) => e.type === "request.resolved")?.payload).toMatchObject({
      requestId: opened.payload.requestId,
      resolution: "cancelled"
    })
    expect(existsSync(join(work, "again.txt"))).toBe(false)
  })

  it("closing the session kills the npm wrapper and the native codex-acp binary it started", async () => {
    expect(processesWithHome(home).length).toBeGreaterThanOrEqual(2)
    await open.close()
    expect(open.log.ofType("session.exited")[0]?.payload.exitKind).toBe("killed")
    expect(processesWithHome(home)).toEqual([])
  })

  it("replaying the recorded transcript reproduces every live event (ids and times aside)", async () => {
    await open.close()
    const { live, replayed } = await replayOfLive(recorder, open.log, threadId)
    expect(replayed).toEqual(live)
    // The session is given the server's emitAll: bursts of the agent's output went in one record each.
    expect(Math.max(...open.log.batches)).toBeGreaterThan(1)
  })
})
