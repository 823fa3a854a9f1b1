import type { Command, ServerFrame, WaitPolicy } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { waitPolicyOf } from "../../src/cli/waitPolicyFlag.ts"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { policyAction } from "../../src/orchestration/WaitPolicies.ts"
import { makeCodexAdapter } from "../../src/provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../../src/provider/codex/CodexMappingState.ts"
import { runCli } from "../cli/support/runCli.ts"
import { askTwoQuestions } from "../provider/codex/realPeerSupport.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import {
  functionCallOutputs,
  startMockResponsesModel,
  type MockResponsesModel,
  type ScriptedOutput
} from "../support/mockResponsesModel.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"

/**
 * Issue 29, the server-owned wait policy, with the real `codex app-server` 0.171.0 and its model
 * scripted on loopback: the server's policy (`after 300 ms → recommended`) answers a question
 * nobody answered with its recommended options, which the agent receives, recorded as the
 * policy's; a session's own policy (`session.start`) overrides it (`cancel`, or `wait`: nothing
 * happens); a secret question is only ever resolved `empty`.
 */
const SERVER_POLICY: WaitPolicy = { kind: "after", afterMs: 300, then: "recommended" }
type EventFrame = ServerFrame & { type: "event" }

let mock: MockResponsesModel
let server: RunningServer
let client: TestClient
const dirs: Array<string> = []
const dir = (label: string) => {
  const made = mkdtempSync(join(tmpdir(), `planbridge-policy-${label}-`))
  dirs.push(made)
  return made
}

beforeAll(async () => {
  assertLoopbackOnly()
  mock = await startMockResponsesModel()
  server = await startServer({
    dataDir: dir("data"),
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    waitPolicy: SERVER_POLICY,
    providers: [
      {
        adapter: makeCodexAdapter({
          model: "gpt-5.5",
          baseUrl: mock.baseUrl,
          envKey: "PLANBRIDGE_MOCK_KEY",
          apiKey: "k"
        }),
        capabilities: codexCapabilities
      }
    ]
  })
  client = await connect({ url: server.url, token: server.token })
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
  await mock?.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const ok = async (command: Command) => {
  const frame = await client.command(command)
  if (frame.type === "error") throw new Error(`${command.type} failed: ${frame.error.code}: ${frame.error.message}`)
  return frame.result as Record<string, unknown>
}

/** A secret question (Codex `isSecret`) with a recommended option, and a plain one. */
const askSecret: ScriptedOutput = {
  type: "function_call",
  name: "request_user_input",
  arguments: {
    questions: [
      {
        id: "api_key",
        header: "Key",
        question: "Which API key should it use?",
        isSecret: true,
        options: [
          { label: "The staging key (Recommended)", description: "sk-staging" },
          { label: "The production key", description: "sk-prod" }
        ]
      },
      {
        id: "test_scope",
        header: "Tests",
        question: "How much test coverage do you want?",
        options: [{ label: "Unit only (Recommended)", description: "Fast feedback." }]
      }
    ]
  }
}

/** A plan-mode session (with its own policy, if given) whose first turn asks `ask`; resolves once asked. */
const asking = async (ask: ScriptedOutput, waitPolicy?: WaitPolicy) => {
  mock.script({ output: [ask] }, { output: [{ type: "text", text: "Noted." }] })
  const { threadId } = (await ok({
    type: "session.start",
    provider: "codex",
    cwd: dir("cwd"),
    mode: "plan",
    ...(waitPolicy === undefined ? {} : { waitPolicy })
  })) as { threadId: string }
  await ok({ type: "thread.subscribe", threadId: threadId as never })
  const requestsBefore = mock.responseRequests().length
  await ok({ type: "turn.start", threadId: threadId as never, text: "Ask me first." })
  const asked = await client.waitFor(isEvent("user-input.requested", threadId), 90_000)
  if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
  return { threadId, promptId: asked.event.payload.prompt.promptId, requestsBefore }
}

const resolvedIn = async (threadId: string) => {
  const resolved = await client.waitFor(isEvent("user-input.resolved", threadId), 90_000)
  if (resolved.event.type !== "user-input.resolved") throw new Error("unreachable")
  return resolved.event.payload
}

describe("the server-owned wait policy", { timeout: 300_000 }, () => {
  it("the server's policy answers with the recommended options, which the agent receives, as the policy", async () => {
    const { threadId, requestsBefore } = await asking(askTwoQuestions)
    expect(await resolvedIn(threadId)).toMatchObject({
      resolution: "answered",
      answers: [
        { questionId: "db_choice", selectedOptionIds: ["opt-0"] },
        { questionId: "test_scope", selectedOptionIds: ["opt-0"] }
      ],
      resolvedBy: { actor: "policy" }
    })
    await client.waitFor(isEvent("turn.completed", threadId), 90_000)
    // The model's next request carries the recommended labels as the tool's output.
    const outputs = JSON.stringify(
      mock
        .responseRequests()
        .slice(requestsBefore)
        .map((r) => functionCallOutputs(r))
    )
    expect(outputs).toContain("PostgreSQL (Recommended)")
    expect(outputs).toContain("Unit only (Recommended)")
    const request = client.frames.find(
      (f): f is EventFrame => f.type === "event" && f.threadId === threadId && f.event.type === "request.resolved"
    )
    expect(request?.event.payload).toMatchObject({ resolvedBy: { actor: "policy" } })
  })

  it("a session's own policy overrides the server's: `cancel` cancels it", async () => {
    const { threadId } = await asking(askTwoQuestions, { kind: "after", afterMs: 300, then: "cancel" })
    expect(await resolvedIn(threadId)).toMatchObject({ resolution: "cancelled", resolvedBy: { actor: "policy" } })
  })

  it("a secret question is resolved `empty`, never answered with a recommendation", async () => {
    const { threadId } = await asking(askSecret)
    expect(await resolvedIn(threadId)).toMatchObject({
      resolution: "empty",
      answers: [],
      resolvedBy: { actor: "policy" }
    })
  })

  it("`wait` waits for a person, however long: the prompt is pending well past the server's delay", async () => {
    const { threadId, promptId } = await asking(askTwoQuestions, { kind: "wait" })
    // Ten times the server's delay: a timer would have fired by now (the others fired within it).
    await new Promise((resolve) => setTimeout(resolve, SERVER_POLICY.afterMs * 10))
    expect(client.frames.some(isEvent("user-input.resolved", threadId))).toBe(false)
    await ok({
      type: "userInput.respond",
      promptId: promptId as never,
      answers: [{ questionId: "db_choice", selectedOptionIds: ["opt-1"] }] as never,
      clientRequestId: "person-1"
    })
    expect(await resolvedIn(threadId)).toMatchObject({
      resolution: "answered",
      resolvedBy: { actor: "user", via: "ws" }
    })
  })
})

describe("what a policy does with a prompt, and the --wait-policy flag", () => {
  const question = (id: string, extra: object = {}) => ({
    id,
    label: id,
    options: [
      { id: "a", label: "A" },
      { id: "b", label: "B", recommended: true }
    ],
    multiSelect: false,
    allowFreeform: false,
    secret: false,
    required: true,
    ...extra
  })
  const prompt = (questions: Array<object>) => ({ promptId: "p", questions, source: "native", blocking: true }) as never

  it("recommended answers each question; a required one without a recommendation makes it empty", () => {
    expect(policyAction(prompt([question("q1"), question("q2")]), "recommended")).toEqual({
      kind: "respond",
      answers: [
        { questionId: "q1", selectedOptionIds: ["b"] },
        { questionId: "q2", selectedOptionIds: ["b"] }
      ]
    })
    const none = question("q3", { options: [{ id: "a", label: "A" }] })
    expect(policyAction(prompt([question("q1"), none]), "recommended")).toEqual({
      kind: "dismiss",
      resolution: "empty"
    })
    expect(policyAction(prompt([question("q1", { secret: true })]), "cancel")).toEqual({
      kind: "dismiss",
      resolution: "empty"
    })
  })

  it("parses the flag, and refuses a bad one with a usage error naming the expected form", async () => {
    expect(waitPolicyOf("wait")).toEqual({ kind: "wait" })
    expect(waitPolicyOf("after:10min:recommended")).toEqual({ kind: "after", afterMs: 600_000, then: "recommended" })
    const bad = await runCli("serve", "--wait-policy", "after:10:recommended", "--port", "0")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("after:<n>(ms|s|min|h)")
    const tooLong = await runCli("serve", "--wait-policy", "after:200h:empty", "--port", "0")
    expect(tooLong.code).toBe(2)
    expect(tooLong.stderr).toContain("7 days")
  })
})
