/**
 * A scripted ACP agent with Cursor's surface (modes agent/plan/ask, auth method cursor_login,
 * permission options allow-once/allow-always/reject-once, the blocking cursor/* extension
 * requests), built on the SDK's agent side and run as a child process over stdio. What it
 * does is chosen by the prompt text (`SCENARIO:<NAME>`); every answer it receives from the
 * client is echoed back as an assistant chunk `RECEIVED <method> <json>`, so a test can check
 * what really reached the agent.
 */
import * as acp from "@agentclientprotocol/sdk"
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { Readable, Writable } from "node:stream"
import { FLOOD_REPORT_ENV, floodChunk, floodCount, pacedChunk, pacedRate } from "./flood.ts"
import { badFloodLine, MALFORMED_LINES, SCRIPTED_SESSION_ID } from "./malformedLines.ts"

const SESSION_ID = SCRIPTED_SESSION_ID
let currentMode = "agent"
let cancelled: (() => void) | undefined
let cancelRequested = false

const modes = () => ({
  currentModeId: currentMode,
  availableModes: [
    { id: "agent", name: "Agent" },
    { id: "plan", name: "Plan" },
    { id: "ask", name: "Ask" }
  ]
})

const configOptions = (): Array<acp.SessionConfigOption> => [
  {
    id: "mode",
    name: "Mode",
    category: "mode",
    type: "select",
    currentValue: currentMode,
    options: [
      { value: "agent", name: "Agent" },
      { value: "plan", name: "Plan" },
      { value: "ask", name: "Ask" }
    ]
  },
  {
    id: "model",
    name: "Model",
    category: "model",
    type: "select",
    currentValue: "auto",
    options: [{ value: "auto", name: "Auto" }]
  }
]

type Client = acp.AgentContext

const update = (client: Client, body: Record<string, unknown>) =>
  client.notify<unknown>("session/update", { sessionId: SESSION_ID, update: body })

const say = (client: Client, text: string) =>
  update(client, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } })
const think = (client: Client, text: string) =>
  update(client, { sessionUpdate: "agent_thought_chunk", content: { type: "text", text } })

/** Sends an agent → client request and echoes the answer (or error) as an assistant chunk. */
const ask = async (client: Client, method: string, params: unknown): Promise<unknown> => {
  try {
    const result = await client.request<unknown, unknown>(method, params)
    await say(client, `RECEIVED ${method} ${JSON.stringify(result)}\n`)
    return result
  } catch (error) {
    const code = error instanceof acp.RequestError ? error.code : "?"
    await say(client, `ERROR ${method} ${code}\n`)
    return undefined
  }
}

const URL_ELICITATION_ID = "acp-login-28"
const urlElicitation = async (client: Client, url: string) => {
  const result = await ask(client, "elicitation/create", {
    sessionId: SESSION_ID,
    mode: "url",
    message: "Log in to the fixture service",
    elicitationId: URL_ELICITATION_ID,
    url
  })
  if ((result as { action?: unknown } | undefined)?.action === "accept")
    await client.notify<unknown>("elicitation/complete", { elicitationId: URL_ELICITATION_ID })
  await say(client, "Login flow over.")
}

const TOOL_ID = "edit-1\nsecond-line"

/** Over the client's 32 MiB line bound by 1 MiB. */
const HUGE_BYTES = 33 * 1024 * 1024

const permission = (client: Client) =>
  ask(client, "session/request_permission", {
    sessionId: SESSION_ID,
    toolCall: {
      toolCallId: TOOL_ID,
      title: "Edit hello.txt",
      kind: "edit",
      status: "pending",
      rawInput: { path: "hello.txt" }
    },
    options: [
      { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
      { optionId: "allow-always", name: "Allow always", kind: "allow_always" },
      { optionId: "reject-once", name: "Reject", kind: "reject_once" }
    ]
  })

const question = (client: Client) =>
  ask(client, "cursor/ask_question", {
    toolCallId: "ask-1",
    title: "A few choices",
    questions: [
      {
        id: "lang",
        prompt: "Which language?",
        options: [
          { id: "ts", label: "TypeScript" },
          { id: "rs", label: "Rust" }
        ]
      },
      {
        id: "extras",
        prompt: "Which extras?",
        options: [
          { id: "tests", label: "Tests" },
          { id: "docs", label: "Docs" },
          { id: "ci", label: "CI" }
        ],
        allowMultiple: true
      }
    ]
  })

/**
 * Real Cursor mirrors its todo list as ACP `plan` session updates (no ids, with `priority`)
 * next to `cursor/update_todos`; this sends such a mirror of the list with these statuses.
 */
const planMirror = (client: Client, statuses: readonly [string, string, string]) =>
  update(client, {
    sessionUpdate: "plan",
    entries: ["Inspect the workspace", "Create hello.txt", "Report back"].map((content, i) => ({
      content,
      priority: "medium",
      status: statuses[i]
    }))
  })

/** Two todo lists (a replace by request, a merge by notification), each mirrored as a `plan`. */
const todoLists = async (client: Client) => {
  await ask(client, "cursor/update_todos", {
    toolCallId: "todos-1",
    merge: false,
    todos: [
      { id: "t1", content: "Inspect the workspace", status: "in_progress" },
      { id: "t2", content: "Create hello.txt", status: "pending" },
      { id: "t3", content: "Report back", status: "pending" }
    ]
  })
  await planMirror(client, ["in_progress", "pending", "pending"])
  await client.notify<unknown>("cursor/update_todos", {
    toolCallId: "todos-2",
    merge: true,
    todos: [
      { id: "t1", status: "completed" },
      { id: "t2", status: "in_progress" }
    ]
  })
  await planMirror(client, ["completed", "in_progress", "pending"])
}

/** Writes one raw line to stdout, after every message the SDK wrote before it. */
const rawLine = (line: string) => new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()))

const paced = async (prompt: string) => {
  // A steady stream (issue 31, item 5): chunk i written at `i / rate` seconds after the start,
  // one line each; lines that fell due while the agent waited are written together, so the
  // rate holds on a loaded machine as long as the pipe takes them.
  const count = floodCount(prompt)
  const rate = pacedRate(prompt)
  const chunk = (i: number, writtenAtMs: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      method: "session/update",
      params: {
        sessionId: SESSION_ID,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: pacedChunk(i, writtenAtMs) } }
      }
    })
  const started = performance.now()
  for (let next = 0; next < count;) {
    const due = Math.min(count, Math.floor(((performance.now() - started) * rate) / 1000) + 1)
    if (due > next) {
      const writtenAtMs = performance.timeOrigin + performance.now()
      await rawLine(Array.from({ length: due - next }, (_, k) => chunk(next + k, writtenAtMs)).join("\n"))
      next = due
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

const scenarios: Record<string, (client: Client, prompt: string) => Promise<void>> = {
  FULL: async (client) => {
    await think(client, "Planning the ")
    await think(client, "work.")
    await say(client, "Let me plan ")
    await say(client, "this.\n")
    await todoLists(client)
    await question(client)
    await ask(client, "cursor/create_plan", {
      toolCallId: "plan-1",
      name: "Hello plan",
      overview: "Create one file.",
      plan: "# Plan\n1. Create hello.txt\n2. Report back",
      todos: [{ id: "t2", content: "Create hello.txt", status: "pending" }]
    })
    await update(client, {
      sessionUpdate: "tool_call",
      toolCallId: TOOL_ID,
      title: "Edit hello.txt",
      kind: "edit",
      status: "pending",
      rawInput: { path: "hello.txt" }
    })
    const decision = (await permission(client)) as { outcome?: { outcome?: string; optionId?: string } } | undefined
    const allowed = decision?.outcome?.outcome === "selected" && decision.outcome.optionId !== "reject-once"
    await update(client, {
      sessionUpdate: "tool_call_update",
      toolCallId: TOOL_ID,
      status: allowed ? "completed" : "failed"
    })
    await planMirror(client, ["completed", "in_progress", "pending"])
    await say(client, "Done.")
  },
  CHECKLIST: async (client) => {
    await todoLists(client)
    // A third mirror, as in the reported run: two todo lists, three plan updates.
    await planMirror(client, ["completed", "in_progress", "pending"])
    await say(client, "Checklist done.")
  },
  PLAN_ONLY: async (client) => {
    await planMirror(client, ["in_progress", "pending", "pending"])
    await planMirror(client, ["completed", "completed", "pending"])
    await say(client, "Plan done.")
  },
  MALFORMED: async (client) => {
    await say(client, "Before the bad lines.")
    for (const line of MALFORMED_LINES) await rawLine(line)
    // Well-formed JSON-RPC for known methods whose params do not decode.
    await update(client, { sessionUpdate: "tool_call", title: "no toolCallId" })
    await ask(client, "session/request_permission", { sessionId: SESSION_ID })
    await say(client, "After the bad lines.")
  },
  WAIT_PERMISSION: async (client) => {
    await say(client, "Asking for permission.")
    await permission(client)
  },
  WAIT_QUESTION: async (client) => {
    await question(client)
  },
  ELICIT: async (client) => {
    await ask(client, "elicitation/create", {
      sessionId: SESSION_ID,
      mode: "form",
      message: "Configure the project",
      requestedSchema: {
        type: "object",
        properties: {
          name: { type: "string", title: "Project name" },
          size: { type: "integer", title: "Size", minimum: 1 },
          lang: {
            type: "string",
            title: "Language",
            oneOf: [
              { const: "ts", title: "TypeScript" },
              { const: "rs", title: "Rust" }
            ]
          },
          ci: { type: "boolean", title: "Set up CI?" },
          extras: {
            type: "array",
            title: "Extras",
            items: {
              anyOf: [
                { const: "tests", title: "Tests" },
                { const: "docs", title: "Docs" }
              ]
            }
          }
        },
        required: ["name", "lang"]
      }
    })
  },
  // URL mode: the client is sent to a page; once it accepted, the agent says the flow completed.
  ELICIT_URL: async (client) => urlElicitation(client, "https://login.example.test/acp?code=28"),
  ELICIT_BAD_URL: async (client) => urlElicitation(client, "javascript:alert(28)"),
  CRASH: async (client) => {
    void permission(client)
    // Notifications are written in order: once this one is out, so is the request.
    await say(client, "Crashing now.")
    process.exit(3)
  },
  HUGE_REQUEST: async (client) => {
    await say(client, "Asking with a huge request.")
    // One line over the client's 32 MiB bound: a permission request this agent then waits on, so
    // a client that skipped the line would leave the turn waiting for ever.
    const rawInput = { text: "x".repeat(HUGE_BYTES) }
    const toolCall = { toolCallId: "huge-1", title: "Huge", kind: "edit", status: "pending", rawInput }
    const options = [{ optionId: "allow-once", name: "Allow once", kind: "allow_once" }]
    const params = { sessionId: SESSION_ID, toolCall, options }
    const method = "session/request_permission"
    await rawLine(JSON.stringify({ jsonrpc: "2.0", id: "huge-request-1", method, params }))
    await new Promise<never>(() => undefined)
  },
  FLOOD: async (_client, prompt) => {
    // As fast as the client reads: blocks of 500 chunk notifications, one write each. One notify
    // per chunk is slower than a server that records a burst in one transaction, and the flood
    // must be the faster side, so that the server's read-ahead bound is what holds it back.
    const count = floodCount(prompt)
    const chunk = (i: number) =>
      JSON.stringify({
        jsonrpc: "2.0",
        method: "session/update",
        params: {
          sessionId: SESSION_ID,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: floodChunk(i) } }
        }
      })
    for (let i = 0; i < count; i += 500) {
      await rawLine(Array.from({ length: Math.min(500, count - i) }, (_, k) => chunk(i + k)).join("\n"))
    }
    const report = process.env[FLOOD_REPORT_ENV]
    if (report !== undefined) writeFileSync(report, JSON.stringify({ count, wroteAtMs: Date.now() }))
  },
  HUGE_CHUNK: async (client, prompt) => {
    // `chunks` chunks (one unless given) of `count` MiB, each a line under the line bound and
    // an event far over the event bound.
    const chunks = Number(/chunks=(\d+)/.exec(prompt)?.[1] ?? "1")
    for (let i = 0; i < chunks; i++) await say(client, "z".repeat(floodCount(prompt) * 1024 * 1024))
    await say(client, "After the huge chunk.")
  },
  PACED: (_client, prompt) => paced(prompt),
  PACED_ASK: async (client, prompt) => {
    // A question left open, and the steady stream under it until the process is ended
    // (fencing: a replica that loses its lease while this streams must stop writing the thread).
    void question(client)
    await paced(prompt)
  },
  STREAM_ASK: async (client, prompt) => {
    // A streaming turn that then blocks on a question (chaos: a server killed at any moment).
    const count = floodCount(prompt)
    for (let i = 0; i < count; i++) await say(client, floodChunk(i))
    await question(client)
  },
  BAD_FLOOD: async (client, prompt) => {
    const count = floodCount(prompt)
    // Written in blocks of 500 lines, as fast as the client reads them.
    for (let i = 0; i < count; i += 500) {
      const block = Array.from({ length: Math.min(500, count - i) }, (_, k) => badFloodLine(i + k).line)
      await rawLine(block.join("\n"))
    }
    await say(client, "Bad flood done.")
  },
  UNKNOWN_EXTENSION: async (client) => {
    await ask(client, "cursor/teleport", { destination: "mars" })
    await say(client, "Carrying on.")
  }
}

/**
 * With `SCRIPTED_CURSOR_LINGER=1` the agent behaves like one that outlives its client: it starts a
 * tool (`sleep`, in its process group) and does not exit when its stdin ends. It writes its pid
 * and the tool's to the file named by `SCRIPTED_CURSOR_PIDS`.
 */
if (process.env.SCRIPTED_CURSOR_LINGER === "1") {
  const tool = spawn("sleep", ["600"], { stdio: "ignore" })
  const pids = process.env.SCRIPTED_CURSOR_PIDS
  if (pids !== undefined) writeFileSync(pids, JSON.stringify({ agent: process.pid, tool: tool.pid }))
  setInterval(() => undefined, 60_000)
}

const app = acp
  .agent({ name: "scripted-cursor" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    // SCRIPTED_CURSOR_NO_LOAD=1 plays an agent that cannot load sessions (thread.resume: unsupported).
    agentCapabilities: { loadSession: process.env.SCRIPTED_CURSOR_NO_LOAD !== "1" },
    authMethods: [{ id: "cursor_login", name: "Cursor Login" }],
    // The pid lets a test check that closing the session killed this process, which runs
    // under a tsx wrapper process like codex-acp's native binary under its npm wrapper.
    agentInfo: { name: "scripted-cursor", version: "0.0.1", title: `pid:${process.pid}` }
  }))
  .onRequest(acp.methods.agent.authenticate, ({ params }) => {
    if (params.methodId !== "cursor_login" || (process.env.CURSOR_API_KEY ?? "").length === 0) {
      throw new acp.RequestError(-32000, "Authentication required")
    }
    return {}
  })
  .onRequest(acp.methods.agent.session.new, () => ({
    sessionId: SESSION_ID,
    modes: modes(),
    configOptions: configOptions()
  }))
  .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
    // Like Cursor, replay the conversation as updates before answering.
    await client.notify<unknown>("session/update", {
      sessionId: params.sessionId,
      update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "earlier question" } }
    })
    await client.notify<unknown>("session/update", {
      sessionId: params.sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "earlier answer" } }
    })
    return { modes: modes(), configOptions: configOptions() }
  })
  .onRequest(acp.methods.agent.session.setMode, async ({ params, client }) => {
    currentMode = params.modeId
    await update(client, { sessionUpdate: "current_mode_update", currentModeId: currentMode })
    return {}
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    cancelRequested = false
    const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join("")
    const name = /SCENARIO:([A-Z_]+)/.exec(text)?.[1] ?? "FULL"
    const scenario = scenarios[name]
    if (scenario === undefined) throw acp.RequestError.invalidParams(undefined, `unknown scenario ${name}`)
    const cancellation = new Promise<"cancelled">((resolve) => {
      cancelled = () => resolve("cancelled")
    })
    const run = scenario(client, text).then(() => "done" as const)
    const first = await Promise.race([run, cancellation])
    if (first === "cancelled" || cancelRequested) {
      // Cursor finishes the pending tool first, then reports the cancellation.
      await run
      return { stopReason: "cancelled" }
    }
    return { stopReason: "end_turn" }
  })
  .onNotification(acp.methods.agent.session.cancel, () => {
    cancelRequested = true
    cancelled?.()
  })

const connection = app.connect(
  acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>
  )
)
void connection.closed.then(() => {
  if (process.env.SCRIPTED_CURSOR_LINGER !== "1") process.exit(0)
})
