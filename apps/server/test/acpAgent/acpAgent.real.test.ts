import type * as acp from "@agentclientprotocol/sdk/unstable"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDemoProviders, type DemoProviders } from "../../src/demo/DemoProviders.ts"
import { DEMO_PLAN_MARKDOWN } from "../../src/demo/scenarios.ts"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { tempDirs } from "../support/fixtureHomes.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"
import { startEditor, updatesOf, type Editor } from "./acpEditor.ts"

/**
 * `planbridge acp` as an editor runs it: a child process on stdio, driven with the ACP SDK's
 * client side, in front of a real Planbridge server whose providers are the real Codex and
 * Claude programs against the demo's scripted model. A WebSocket client plays the web UI.
 */

const STEP_MS = 120_000
const dirs = tempDirs()
let dataDir: string
let demo: DemoProviders
let server: RunningServer
let web: TestClient
const editors: Array<Editor> = []

const startPlanbridge = async () => {
  server = await startServer({ dataDir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: demo.providers })
  web = await connect({ url: server.url, token: server.token })
}
const stopPlanbridge = async () => {
  await web.close()
  await server.close()
}

/** An editor with `planbridge acp --url … --provider P`, the token only in its environment. */
const editorFor = async (provider: string) => {
  const editor = startEditor(["--url", server.url, "--provider", provider, "--data-dir", dataDir], {
    ...process.env,
    PLANBRIDGE_TOKEN: server.token
  })
  editors.push(editor)
  await editor.initialize()
  return editor
}

const newSession = async (editor: Editor, mode: "plan" | "default") => {
  const cwd = dirs.make("acp-cwd")
  const { sessionId } = await editor.agent.request("session/new", { cwd, mcpServers: [] })
  if (mode === "plan") await editor.agent.request("session/set_mode", { sessionId, modeId: "plan" })
  return { sessionId, cwd }
}

const prompt = (editor: Editor, sessionId: string, text: string) =>
  editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] })

const nextElicitation = (editor: Editor, seen: number) =>
  editor.until(() => editor.elicitations[seen], "an elicitation", STEP_MS)
const nextPermission = (editor: Editor, seen: number) =>
  editor.until(() => editor.permissions[seen], "a permission request", STEP_MS)

const Choice = Schema.Struct({ const: Schema.String, title: Schema.String })
/** A form field as the test reads it: its choices, single (`oneOf`) or multiple (`items.anyOf`). */
const Field = Schema.Struct({
  type: Schema.String,
  oneOf: Schema.optionalKey(Schema.Array(Choice)),
  items: Schema.optionalKey(Schema.Struct({ anyOf: Schema.Array(Choice) }))
})
const fieldsOf = (asked: { readonly params: acp.CreateElicitationRequest }) =>
  Schema.decodeUnknownSync(
    Schema.Struct({ requestedSchema: Schema.Struct({ properties: Schema.Record(Schema.String, Field) }) })
  )(asked.params).requestedSchema.properties

const textOf = (updates: ReadonlyArray<{ readonly content: acp.ContentBlock }>) =>
  updates.map((u) => (u.content.type === "text" ? u.content.text : "")).join("")

let codex: Editor
let claude: Editor
/** Sessions made before the restart, to list, load and resume after it. */
const before: { codexQuestion?: string; codexChecklist?: string } = {}

beforeAll(async () => {
  assertLoopbackOnly()
  dataDir = dirs.make("acp-data")
  demo = await startDemoProviders()
  await startPlanbridge()
  ;[codex, claude] = await Promise.all([editorFor("codex"), editorFor("claude")])
}, STEP_MS)

afterAll(async () => {
  for (const editor of editors) await editor.close()
  await stopPlanbridge()
  await demo.close()
  dirs.removeAll()
})

describe("planbridge acp: an editor's view of a Planbridge server", () => {
  it("initialize offers load, list and resume; the token is in no message the editor sees", async () => {
    const init = await codex.initialize()
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      sessionCapabilities: { list: {}, resume: {} },
      promptCapabilities: { image: false, embeddedContext: true }
    })
    expect(JSON.stringify(init)).not.toContain(server.token)
  })

  it(
    "bad input: an unknown method, wrong params and a 10 MB line get ACP errors; the agent goes on",
    async () => {
      await expect(codex.agent.request("planbridge/nonsense", {})).rejects.toMatchObject({ code: -32601 })
      await expect(codex.agent.request("session/prompt", { sessionId: 42 })).rejects.toMatchObject({ code: -32602 })
      await expect(
        codex.agent.request("session/prompt", { sessionId: "nope", prompt: [{ type: "text", text: "hi" }] })
      ).rejects.toMatchObject({ code: -32002, data: { planbridge: { code: "unknown_thread" } } })
      await expect(
        codex.agent.request("session/load", { sessionId: "no-such-thread", cwd: "/", mcpServers: [] })
      ).rejects.toMatchObject({ code: -32002, data: { planbridge: { code: "unknown_thread" } } })
      await expect(
        codex.agent.request("session/load", { sessionId: "", cwd: "/", mcpServers: [] })
      ).rejects.toMatchObject({ code: -32602 })
      // A request far over the 4 MiB line bound is refused under its own id, not dropped or fatal.
      const huge = JSON.stringify({
        jsonrpc: "2.0",
        id: "huge-1",
        method: "session/prompt",
        params: { sessionId: "x", prompt: [{ type: "text", text: "y".repeat(10 * 1024 * 1024) }] }
      })
      let raw = ""
      const replied = new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no reply to the oversized line")), 60_000)
        const collect = (chunk: Buffer) => {
          raw += String(chunk)
          const line = raw.split("\n").find((l) => l.includes('"huge-1"'))
          if (line === undefined) return
          clearTimeout(timer)
          codex.child.stdout.off("data", collect)
          resolve(line)
        }
        codex.child.stdout.on("data", collect)
      })
      codex.writeRaw(`${huge}\n`)
      const reply = await replied
      expect(JSON.parse(reply!)).toMatchObject({ id: "huge-1", error: { code: -32600 } })
      expect(reply).toContain("4194304 bytes")
      // Not JSON at all: a parse error, and the connection still answers.
      codex.writeRaw("{not json\n")
      expect((await codex.initialize()).protocolVersion).toBe(1)
      expect(codex.child.exitCode).toBeNull()
    },
    STEP_MS
  )

  it(
    "Codex: a plan-mode question arrives as an elicitation, the answer reaches the model, the plan as plan_update",
    async () => {
      const { sessionId } = await newSession(codex, "plan")
      before.codexQuestion = sessionId
      expect(updatesOf(codex, sessionId, "current_mode_update").at(-1)?.currentModeId).toBe("plan")
      const seen = codex.elicitations.length
      const turn = prompt(codex, sessionId, "Ask me questions, then plan.")
      const asked = await nextElicitation(codex, seen)
      const fields = fieldsOf(asked)
      expect(Object.keys(fields)).toEqual(["language", "language__text", "service_name", "service_name__text"])
      const go = fields.language?.oneOf?.find((o) => o.title === "Go")
      asked.reply({ action: "accept", content: { language: go!.const, service_name__text: "hello-world" } })
      expect(await turn).toEqual({ stopReason: "end_turn" })
      const plans = updatesOf(codex, sessionId, "plan_update")
      expect(plans.map((p) => p.plan.type === "markdown" && p.plan.content)).toEqual([DEMO_PLAN_MARKDOWN])
      // The real app-server sent the scripted model the editor's answers.
      const answered = demo.models.codex.requests
        .map((r) => JSON.stringify(r.body))
        .find((b) => b.includes("user_note"))
      expect(answered).toContain('\\"language\\":{\\"answers\\":[\\"Go\\"]}')
      expect(answered).toContain("user_note: hello-world")
      // The question's tool call closes with the answer.
      const closing = updatesOf(codex, sessionId, "tool_call_update").find((u) => u.status === "completed")
      expect(JSON.stringify(closing?.content)).toContain("Go")
      expect(JSON.stringify(codex.updates)).not.toContain(server.token)
    },
    STEP_MS * 3
  )

  it(
    "Codex: the same question answered from the web client cancels the editor's request; one resolution",
    async () => {
      const { sessionId } = await newSession(codex, "plan")
      const subscribed = await web.command({ type: "thread.subscribe", threadId: sessionId as never })
      expect(subscribed.type).toBe("result")
      const seen = codex.elicitations.length
      const turn = prompt(codex, sessionId, "Ask me questions, then plan.")
      const asked = await nextElicitation(codex, seen)
      const requested = await web.waitFor(isEvent("user-input.requested", sessionId), STEP_MS)
      if (requested.event.type !== "user-input.requested") throw new Error("unreachable")
      const { prompt: card } = requested.event.payload
      const answered = await web.command({
        type: "userInput.respond",
        promptId: card.promptId,
        answers: card.questions.map((q) => ({ questionId: q.id, selectedOptionIds: [q.options[0]!.id] })),
        clientRequestId: "acp-answered-on-the-web"
      })
      expect(answered.type).toBe("result")
      // The agent withdrew the editor's request ($/cancel_request) instead of leaving it open.
      await codex.until(() => (asked.signal.aborted ? true : undefined), "the elicitation's cancellation", STEP_MS)
      expect(await turn).toEqual({ stopReason: "end_turn" })
      const resolutions = web.frames.filter(
        (f) => f.type === "event" && f.threadId === sessionId && f.event.type === "user-input.resolved"
      )
      expect(resolutions).toHaveLength(1)
      const update = updatesOf(codex, sessionId, "tool_call_update").find((u) => u.toolCallId === card.promptId)
      expect(update).toMatchObject({ status: "completed" })
      expect(JSON.stringify(update?.content)).toContain("Answered")
    },
    STEP_MS * 3
  )

  it(
    "Codex: a checklist arrives as plan entries, one step further each time",
    async () => {
      const { sessionId } = await newSession(codex, "default")
      before.codexChecklist = sessionId
      expect(await prompt(codex, sessionId, "Show me a checklist.")).toEqual({ stopReason: "end_turn" })
      expect(updatesOf(codex, sessionId, "plan").map((p) => p.entries.map((e) => e.status))).toEqual([
        ["in_progress", "pending", "pending"],
        ["completed", "in_progress", "pending"],
        ["completed", "completed", "completed"]
      ])
      expect(textOf(updatesOf(codex, sessionId, "agent_message_chunk")).length).toBeGreaterThan(0)
    },
    STEP_MS * 2
  )

  it(
    "Codex: session/cancel interrupts the turn; its open elicitation is withdrawn; mode by config option",
    async () => {
      const cwd = dirs.make("acp-cwd")
      const { sessionId } = await codex.agent.request("session/new", { cwd, mcpServers: [] })
      const set = await codex.agent.request("session/set_config_option", { sessionId, configId: "mode", value: "plan" })
      expect(set.configOptions.find((o) => o.id === "mode")).toMatchObject({ currentValue: "plan" })
      await expect(
        codex.agent.request("session/set_config_option", { sessionId, configId: "mode", value: "warp" })
      ).rejects.toMatchObject({ code: -32602 })
      const seen = codex.elicitations.length
      const turn = prompt(codex, sessionId, "Ask me questions, then plan.")
      const asked = await nextElicitation(codex, seen)
      await codex.agent.notify("session/cancel", { sessionId })
      expect(await turn).toEqual({ stopReason: "cancelled" })
      await codex.until(() => (asked.signal.aborted ? true : undefined), "the elicitation's cancellation", STEP_MS)
    },
    STEP_MS * 2
  )

  it(
    "a question pending in a thread started elsewhere is asked when the editor loads it; its answer counts",
    async () => {
      const cwd = dirs.make("acp-cwd")
      const started = await web.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })
      if (started.type !== "result") throw new Error(`session.start failed: ${JSON.stringify(started)}`)
      const { threadId } = started.result as { threadId: string }
      await web.command({ type: "thread.subscribe", threadId: threadId as never })
      await web.command({ type: "turn.start", threadId: threadId as never, text: "Ask me questions, then plan." })
      await web.waitFor(isEvent("user-input.requested", threadId), STEP_MS)
      const seen = codex.elicitations.length
      await codex.agent.request("session/load", { sessionId: threadId, cwd, mcpServers: [] })
      expect(textOf(updatesOf(codex, threadId, "user_message_chunk"))).toContain("Ask me questions, then plan.")
      const asked = await nextElicitation(codex, seen)
      const fields = fieldsOf(asked)
      asked.reply({
        action: "accept",
        content: { language: fields.language!.oneOf![0]!.const, service_name: fields.service_name!.oneOf![0]!.const }
      })
      const resolved = await web.waitFor(isEvent("user-input.resolved", threadId), STEP_MS)
      expect(resolved.event.type === "user-input.resolved" && resolved.event.payload.resolution).toBe("answered")
      await web.waitFor(isEvent("turn.completed", threadId), STEP_MS)
    },
    STEP_MS * 3
  )

  it(
    "Claude: questions as an elicitation, then the proposed plan as plan_update, approved by permission",
    async () => {
      const { sessionId } = await newSession(claude, "plan")
      const seenForms = claude.elicitations.length
      const seenPermissions = claude.permissions.length
      const turn = prompt(claude, sessionId, "Ask me a question or two first.")
      const asked = await nextElicitation(claude, seenForms)
      const fields = Object.entries(fieldsOf(asked))
      const [languageKey, language] = fields.find(([, p]) => (p.oneOf?.length ?? 0) > 0)!
      const [extrasKey, extras] = fields.find(([, p]) => p.type === "array")!
      const typescript = language.oneOf![0]!.const
      const extraIds = extras.items!.anyOf.map((o) => o.const)
      asked.reply({
        action: "accept",
        content: { [languageKey]: typescript, [extrasKey]: [extraIds[0]!, extraIds[2]!] }
      })
      const approval = await nextPermission(claude, seenPermissions)
      expect(approval.params.toolCall.kind).toBe("switch_mode")
      const plans = updatesOf(claude, sessionId, "plan_update")
      expect(plans.map((p) => (p.plan.type === "markdown" ? p.plan.content.trim() : ""))).toEqual([
        DEMO_PLAN_MARKDOWN.trim()
      ])
      const approve = approval.params.options.find((o) => o.kind === "allow_once")!
      approval.reply({ outcome: { outcome: "selected", optionId: approve.optionId } })
      expect(await turn).toEqual({ stopReason: "end_turn" })
      // The real CLI told the scripted model the answers the editor gave.
      const sent = JSON.stringify(demo.models.claude.requests.map((r) => r.body))
      expect(sent).toContain("Logging, Docker")
    },
    STEP_MS * 4
  )

  it(
    "after a server restart: session/list lists the threads, session/load replays one, session/resume continues another",
    async () => {
      const questionId = before.codexQuestion!
      const checklistId = before.codexChecklist!
      await stopPlanbridge()
      await startPlanbridge()
      const editor = await editorFor("codex")
      const { sessions } = await editor.agent.request("session/list", {})
      const listed = sessions.find((s) => s.sessionId === questionId)
      expect(listed?.cwd.length).toBeGreaterThan(0)
      expect(sessions.map((s) => s.sessionId)).toContain(checklistId)

      await editor.agent.request("session/load", { sessionId: questionId, cwd: listed!.cwd, mcpServers: [] })
      expect(textOf(updatesOf(editor, questionId, "user_message_chunk"))).toContain("Ask me questions, then plan.")
      expect(updatesOf(editor, questionId, "plan_update")).toHaveLength(1)
      expect(textOf(updatesOf(editor, questionId, "agent_message_chunk")).length).toBeGreaterThan(0)

      const resumeCwd = sessions.find((s) => s.sessionId === checklistId)!.cwd
      await editor.agent.request("session/resume", { sessionId: checklistId, cwd: resumeCwd })
      // No replay on resume: nothing of the earlier turn is sent again.
      expect(updatesOf(editor, checklistId, "plan")).toHaveLength(0)
      expect(await prompt(editor, checklistId, "Show me a checklist again.")).toEqual({ stopReason: "end_turn" })
      expect(updatesOf(editor, checklistId, "plan")).toHaveLength(3)
      // The resumed Codex thread sent the model the earlier conversation too: it continued it.
      const resumed = demo.models.codex.requests
        .map((r) => JSON.stringify(r.body))
        .find((b) => b.includes("Show me a checklist again."))
      expect(resumed).toContain("Show me a checklist.")
    },
    STEP_MS * 3
  )
})
