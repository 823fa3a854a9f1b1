import type {
  PromptQuestion,
  QuestionId,
  RuntimeEvent,
  ServerFrame,
  ThreadId,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startServer } from "../../../src/http/HttpServer.ts"
import { makeClaudeAdapter } from "../../../src/provider/claude/ClaudeAdapter.ts"
import { CLAUDE_CAPABILITIES } from "../../../src/provider/claude/ClaudeModes.ts"
import { requestIds } from "../../../src/provider/claude/ClaudeRequests.ts"
import {
  startMockMessagesModel,
  toolResultText,
  withoutSystemReminders,
  type ContentBlock,
  type MockMessagesModel,
  type ScriptedBlock
} from "../../support/mockMessagesModel.ts"
import { connect, type TestClient } from "../../support/wsClient.ts"

/**
 * The answer-integrity check against the real Claude Agent SDK: a prompt recorded `answered`
 * must mean the model received exactly those answers, and nothing is ever cancelled that no
 * client cancelled. A real server (SQLite ingestion, WebSocket) runs the real SDK and CLI; each
 * iteration runs one turn of a scenario, two WebSocket clients answer at once, then it compares, per prompt, the recorded resolution with the `tool_result`
 * in the scripted model's next request. Shared by the test (a few dozen iterations) and
 * `npm run stress` (hundreds).
 */

export type Scenario = "four-questions" | "two-tool-uses"

export interface IntegrityReport {
  readonly iterations: number
  readonly prompts: number
  readonly answered: number
  /** Recorded resolution and what the model got disagree. */
  readonly mismatches: ReadonlyArray<string>
  /** Prompts resolved `cancelled` although no client cancelled them. */
  readonly selfCancellations: number
  /** Answers the adapter refused although no client had answered that prompt before. */
  readonly refusedAnswers: number
}

const question = (text: string, header: string, labels: ReadonlyArray<string>, multiSelect = false) => ({
  question: text,
  header,
  options: labels.map((label) => ({ label, description: `${label} (description)` })),
  multiSelect
})

const Q = {
  lang: question("Which language should the tool use?", "Language", ["TypeScript", "Go"]),
  db: question("Which database should it store data in?", "Database", ["SQLite", "PostgreSQL", "None"]),
  extras: question("Which extras do you want?", "Extras", ["Colors", "Emoji", "Uppercase"], true),
  naming: question("How should the output file be named?", "Naming", ["out.txt", "result.txt"]),
  style: question("Which greeting style should it use?", "Style", ["Formal", "Casual"]),
  scope: question("Which tests should be written?", "Tests", ["Unit", "Integration"])
} as const

const FREE_TEXT = "name it after the date"

const scenarioBlocks = (scenario: Scenario): ReadonlyArray<ScriptedBlock> =>
  scenario === "four-questions"
    ? [{ type: "tool_use", name: "AskUserQuestion", input: { questions: [Q.lang, Q.db, Q.extras, Q.naming] } }]
    : [
        { type: "text", text: "Two decisions first." },
        { type: "tool_use", name: "AskUserQuestion", input: { questions: [Q.style] } },
        { type: "tool_use", name: "AskUserQuestion", input: { questions: [Q.scope] } }
      ]

const optionIds = (q: PromptQuestion | undefined, labels: ReadonlyArray<string>) =>
  labels.map((label) => {
    const id = q?.options.find((o) => o.label === label)?.id
    if (id === undefined) throw new Error(`no option ${label}`)
    return id
  })

/** The answers a client gives to a prompt of the scenario (varied by iteration). */
const answersFor = (prompt: UserInputPrompt, iteration: number): ReadonlyArray<UserInputAnswerEntry> =>
  prompt.questions.map((q) => {
    const id = q.id as QuestionId
    const labels = q.options.map((o) => o.label)
    if (q.label === Q.extras.question)
      return { questionId: id, selectedOptionIds: optionIds(q, ["Colors", "Uppercase"]) }
    if (q.label === Q.naming.question) return { questionId: id, text: `${FREE_TEXT} #${iteration}` }
    return { questionId: id, selectedOptionIds: optionIds(q, [labels[iteration % labels.length] ?? ""]) }
  })

/** `"question"="answer"` pairs as the CLI writes them into the tool result. */
const pairsOf = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/"([^"]*)"="([^"]*)"/g)].map((m) => [m[1] ?? "", m[2] ?? ""]))

/** What the model must have been told for a recorded `answered` resolution. */
const expectedPairs = (prompt: UserInputPrompt, answers: ReadonlyArray<UserInputAnswerEntry>): Record<string, string> =>
  Object.fromEntries(
    answers.map((entry) => {
      const q = prompt.questions.find((x) => x.id === entry.questionId)
      const labels = (entry.selectedOptionIds ?? []).map((id) => q?.options.find((o) => o.id === id)?.label ?? `?${id}`)
      return [q?.label ?? `?${entry.questionId}`, entry.text ?? labels.join(", ")]
    })
  )

const canonical = (pairs: Record<string, string>) =>
  JSON.stringify(Object.entries(pairs).sort(([a], [b]) => a.localeCompare(b)))

const toolResultFor = (mock: MockMessagesModel, toolUseID: string): ContentBlock | undefined => {
  for (const request of mock.mainRequests()) {
    for (const message of request.body.messages ?? []) {
      if (typeof message.content === "string") continue
      const found = message.content.find((b) => b.type === "tool_result" && b.tool_use_id === toolUseID)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** A plan-mode Claude session behind a real server, watched and answered by two WebSocket clients. */
export interface IntegrityRig {
  readonly mock: MockMessagesModel
  readonly threadId: ThreadId
  readonly clients: readonly [TestClient, TestClient]
  readonly close: () => Promise<void>
}

export const startIntegrityRig = async (): Promise<IntegrityRig> => {
  const dataDir = mkdtempSync(join(tmpdir(), "planbridge-integrity-"))
  const cwd = mkdtempSync(join(tmpdir(), "planbridge-integrity-cwd-"))
  const mock = await startMockMessagesModel()
  const server = await startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: [{ adapter: makeClaudeAdapter({ baseUrl: mock.baseUrl }), capabilities: CLAUDE_CAPABILITIES }]
  })
  const clients = [
    await connect({ url: server.url, token: server.token }),
    await connect({ url: server.url, token: server.token })
  ] as const
  const start = await clients[0].command({ type: "session.start", provider: "claude", cwd, mode: "plan" })
  if (start.type !== "result") throw new Error(`session.start failed: ${JSON.stringify(start)}`)
  const threadId = (start.result as { threadId: ThreadId }).threadId
  for (const client of clients) {
    const subscribed = await client.command({ type: "thread.subscribe", threadId })
    if (subscribed.type !== "result") throw new Error(`thread.subscribe failed: ${JSON.stringify(subscribed)}`)
  }
  return {
    mock,
    threadId,
    clients,
    close: async () => {
      await Promise.all(clients.map((c) => c.close()))
      await server.close()
      await mock.close()
      rmSync(dataDir, { recursive: true, force: true })
      rmSync(cwd, { recursive: true, force: true })
    }
  }
}

const eventsOf = (client: TestClient, type: string, afterSeq: number): ReadonlyArray<RuntimeEvent & { seq: number }> =>
  client.frames.flatMap((f) =>
    f.type === "event" && f.seq > afterSeq && f.event.type === type ? [{ ...f.event, seq: f.seq }] : []
  )

const lastSeq = (client: TestClient) =>
  client.frames.reduce(
    (max, f) => (f.type === "event" || f.type === "snapshot" ? Math.max(max, "seq" in f ? Number(f.seq) : 0) : max),
    0
  )

const waitEvent = (
  client: TestClient,
  type: string,
  afterSeq: number,
  where: (e: RuntimeEvent) => boolean = () => true
) =>
  client.waitFor(
    (f): f is ServerFrame & { type: "event" } =>
      f.type === "event" && f.seq > afterSeq && f.event.type === type && where(f.event),
    30_000
  )

/** Runs `iterations` turns of `scenario` and checks every prompt against what the model got. */
export const runAnswerIntegrity = async (
  rig: IntegrityRig,
  scenario: Scenario,
  iterations: number,
  onIteration?: (done: number, report: IntegrityReport) => void
): Promise<IntegrityReport> => {
  const [first, second] = rig.clients
  const mismatches: Array<string> = []
  let prompts = 0
  let answered = 0
  let selfCancellations = 0
  let refusedAnswers = 0
  const expectedPrompts = scenario === "four-questions" ? 1 : 2
  const report = (done: number): IntegrityReport => ({
    iterations: done,
    prompts,
    answered,
    mismatches,
    selfCancellations,
    refusedAnswers
  })

  for (let i = 0; i < iterations; i++) {
    rig.mock.script({ blocks: scenarioBlocks(scenario) }, { blocks: [{ type: "text", text: `Noted (${i}).` }] })
    const mark = lastSeq(first)
    const started = await first.command({ type: "turn.start", threadId: rig.threadId, text: `Iteration ${i}: ask me` })
    if (started.type !== "result") throw new Error(`turn.start failed: ${JSON.stringify(started)}`)
    const prompted: Array<UserInputPrompt> = []
    for (let k = 0; k < expectedPrompts; k++) {
      const frame = await waitEvent(
        first,
        "user-input.requested",
        mark,
        (e) => e.type === "user-input.requested" && !prompted.some((p) => p.promptId === e.payload.prompt.promptId)
      )
      if (frame.event.type === "user-input.requested") prompted.push(frame.event.payload.prompt)
    }
    // Two clients answer at once, the later prompt first (out of order); one prompt each.
    const results = await Promise.all(
      [...prompted].reverse().map((prompt, k) =>
        (k % 2 === 0 ? second : first).command({
          type: "userInput.respond",
          promptId: prompt.promptId,
          answers: answersFor(prompt, i),
          clientRequestId: `integrity-${scenario}-${i}-${k}`
        })
      )
    )
    refusedAnswers += results.filter((r) => r.type !== "result").length
    const turnId = (started.result as { turnId: string }).turnId
    await waitEvent(first, "turn.completed", mark, (e) => e.turnId === turnId).catch((error: unknown) => {
      const seen = first.frames.flatMap((f) => (f.type === "event" && f.seq > mark ? [`${f.event.type}`] : []))
      throw new Error(
        `iteration ${i}: the turn did not complete (${String(error)}); events: ${seen.join(", ")}; ${JSON.stringify(results)}`
      )
    })

    for (const prompt of prompted) {
      prompts++
      const resolved = eventsOf(first, "user-input.resolved", mark).find(
        (e) => e.type === "user-input.resolved" && e.payload.promptId === prompt.promptId
      )
      const toolUseID = prompt.promptId.slice(requestIds(rig.threadId, "").promptId.length)
      const result = toolResultFor(rig.mock, toolUseID)
      const text = result === undefined ? "(no tool_result)" : withoutSystemReminders(toolResultText(result))
      const where = `iteration ${i}, prompt ${toolUseID}`
      if (resolved === undefined || resolved.type !== "user-input.resolved") {
        mismatches.push(`${where}: no resolution recorded; the model got ${JSON.stringify(text)}`)
        continue
      }
      if (resolved.payload.resolution === "cancelled") selfCancellations++
      if (resolved.payload.resolution !== "answered") {
        if (result?.is_error !== true) {
          mismatches.push(`${where}: recorded ${resolved.payload.resolution}, the model got ${JSON.stringify(text)}`)
        }
        continue
      }
      answered++
      const expected = expectedPairs(prompt, resolved.payload.answers)
      const got = pairsOf(text)
      if (result?.is_error === true || canonical(got) !== canonical(expected)) {
        mismatches.push(
          `${where}: recorded answered ${JSON.stringify(expected)}, the model got ${JSON.stringify(text)}`
        )
      }
    }
    onIteration?.(i + 1, report(i + 1))
  }
  return report(iterations)
}
