import {
  decodeRuntimeEventSync,
  type OptionId,
  type QuestionId,
  type RequestId,
  type RuntimeEvent,
  type ThreadId
} from "@planbridge/contracts"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { EmitError } from "../../../src/provider/ProviderAdapter.ts"
import { codexReplayMapping } from "../../../src/provider/codex/CodexReplay.ts"
import { replay } from "../../../src/provider/kernel/replay.ts"
import { functionCallOutputs, type ScriptedOutput } from "../../support/mockResponsesModel.ts"
import { withCodexHarness } from "./harness.ts"
import {
  askTwoQuestions,
  expectAdapterError,
  ofType,
  PLAN_MARKDOWN,
  planReply,
  transcriptOf,
  withoutEnvelope
} from "./realPeerSupport.ts"

/**
 * The Codex adapter against the real `codex app-server` 0.171.0 (only the model is scripted):
 * questions, answers, proposed plans, checklists, approvals, steering. Runs inside the
 * loopback-only namespace (`npm test`).
 */

beforeAll(() => assertLoopbackOnly())
const started = Date.now()
afterAll(() => {
  console.info(`codexAdapter.real.test.ts wall time: ${Date.now() - started} ms`)
})

describe("Codex adapter on the real app-server", () => {
  it("plan turn: two questions answered from the canonical side, then a proposed plan", async () => {
    await withCodexHarness({ mode: "plan", threadId: "thread-plan" as ThreadId }, (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [askTwoQuestions] }, { output: [planReply] })
        const turnId = yield* h.session.startTurn({ text: "Plan a small HTTP service for me." })
        const requested = yield* h.waitForEvent("user-input.requested")
        const prompt = requested.payload.prompt
        expect(prompt.source).toBe("native")
        expect(prompt.blocking).toBe(true)
        expect(
          prompt.questions.map((q) => [q.id, q.header, q.label, q.allowFreeform, q.multiSelect, q.secret])
        ).toEqual([
          ["db_choice", "Database", "Which database should the service use?", true, false, false],
          ["test_scope", "Tests", "How much test coverage do you want?", true, false, false]
        ])
        expect(prompt.questions[0].options).toEqual([
          {
            id: "opt-0",
            label: "PostgreSQL (Recommended)",
            description: "Relational, strong consistency.",
            recommended: true
          },
          { id: "opt-1", label: "SQLite", description: "Embedded, zero-ops." }
        ])
        const opened = yield* h.waitForEvent("request.opened")
        expect(opened.payload).toMatchObject({
          requestKind: "user_input",
          native: { method: "item/tool/requestUserInput" },
          promptId: prompt.promptId
        })

        // A bad answer is refused with the path, and nothing is sent.
        const bad = yield* Effect.flip(
          h.session.respondToUserInput({
            promptId: prompt.promptId,
            answers: [{ questionId: "db_choice" as QuestionId, selectedOptionIds: ["opt-9" as OptionId] }]
          })
        )
        expect(bad.kind).toBe("invalid_answer")
        expect(bad.message).toContain('["answers",0,"selectedOptionIds",0]')

        yield* h.session.respondToUserInput({
          promptId: prompt.promptId,
          answers: [
            { questionId: "db_choice" as QuestionId, selectedOptionIds: ["opt-1" as OptionId] },
            { questionId: "test_scope" as QuestionId, selectedOptionIds: ["opt-0" as OptionId], text: "plus fuzzing" }
          ]
        })
        const completed = yield* h.waitForEvent("turn.completed")
        expect(completed.turnId).toBe(turnId)
        expect(completed.payload.status).toBe("completed")

        // The model's next request carries exactly the answers, as the tool output.
        const [, second] = yield* Effect.promise(() => h.mock.waitForResponseRequests(2))
        const outputs = functionCallOutputs(second!)
        expect(outputs).toHaveLength(1)
        expect(JSON.parse(String(outputs[0]!.output))).toEqual({
          answers: {
            db_choice: { answers: ["SQLite"] },
            test_scope: { answers: ["Unit only (Recommended)", "user_note: plus fuzzing"] }
          }
        })

        const events = [...h.events]
        events.forEach((e) => decodeRuntimeEventSync(e))
        expect(ofType(events, "user-input.resolved").map((e) => e.payload)).toEqual([
          {
            promptId: prompt.promptId,
            resolution: "answered",
            answers: [
              { questionId: "db_choice", selectedOptionIds: ["opt-1"] },
              { questionId: "test_scope", selectedOptionIds: ["opt-0"], text: "plus fuzzing" }
            ]
          }
        ])
        expect(ofType(events, "request.resolved").map((e) => e.payload)).toEqual([
          { requestId: opened.payload.requestId, resolution: "responded" }
        ])
        const plan = ofType(events, "plan.proposed.completed")
        // The plan is named by its own item (0.171.0 gives it an id of its own; 0.171.0 used `<turnId>-plan`).
        const planItem = ofType(events, "item.completed").find((e) => e.payload.itemType === "plan")
        expect(planItem?.turnId).toBe(turnId)
        expect(plan.map((e) => e.payload)).toEqual([{ planId: planItem?.itemId, markdown: PLAN_MARKDOWN }])
        expect(
          ofType(events, "content.delta").filter((e) => e.payload.streamKind === "plan_text").length
        ).toBeGreaterThan(1)
        expect(
          ofType(events, "plan.proposed.delta")
            .map((e) => e.payload.delta)
            .join("")
        ).toBe(PLAN_MARKDOWN)
        expect(ofType(events, "session.configured")[0]?.payload).toMatchObject({
          mode: "plan",
          capabilities: { supportsMultiSelect: false }
        })
        expect(ofType(events, "turn.started")[0]?.payload.mode).toBe("plan")
        expect(ofType(events, "session.state.changed").map((e) => e.payload.flags)).toContainEqual([
          "waitingOnUserInput"
        ])
        const message = ofType(events, "item.completed").find((e) => e.payload.itemType === "assistant_message")
        expect(message?.payload.text).toBe("Thanks for the answers. Here is my plan.\n\n")
        for (const e of events) expect(e.raw?.payload).toBeDefined()

        // The same transcript replays to the same events.
        const replayed = yield* replay(codexReplayMapping, transcriptOf(h, "plan"), {
          threadId: "thread-plan" as ThreadId
        })
        expect(withoutEnvelope(replayed)).toEqual(withoutEnvelope(events))
      })
    )
  })

  it("parallel questions arrive one at a time and are answered by their own ids", async () => {
    await withCodexHarness({ mode: "plan" }, (h) =>
      Effect.gen(function* () {
        const one = (id: string, callId: string): ScriptedOutput => ({
          type: "function_call",
          name: "request_user_input",
          callId,
          arguments: {
            questions: [
              {
                id,
                header: id,
                question: `Pick ${id}`,
                options: [
                  { label: "A", description: "a" },
                  { label: "B", description: "b" }
                ]
              }
            ]
          }
        })
        h.mock.script(
          { output: [one("first", "call_first"), one("second", "call_second")] },
          { output: [{ type: "text", text: "Done." }] }
        )
        yield* h.session.startTurn({ text: "Ask me two things." })
        // Codex runs the two calls concurrently, so either may ask first; the other waits its turn.
        const first = yield* h.waitForEvent("user-input.requested")
        expect(ofType(h.events, "user-input.requested")).toHaveLength(1)
        const firstId = first.payload.prompt.questions[0].id
        yield* h.session.respondToUserInput({
          promptId: first.payload.prompt.promptId,
          answers: [{ questionId: firstId, selectedOptionIds: ["opt-0" as OptionId] }]
        })
        const second = yield* h.waitForEvent(
          "user-input.requested",
          (e) => e.payload.prompt.promptId !== first.payload.prompt.promptId
        )
        const secondId = second.payload.prompt.questions[0].id
        expect([firstId, secondId].sort()).toEqual(["first", "second"])
        yield* h.session.respondToUserInput({
          promptId: second.payload.prompt.promptId,
          answers: [{ questionId: secondId, selectedOptionIds: ["opt-1" as OptionId] }]
        })
        yield* h.waitForEvent("turn.completed")
        const resolved = ofType(h.events, "user-input.resolved")
        expect(resolved.map((e) => e.payload.resolution)).toEqual(["answered", "answered"])
        const [, next] = yield* Effect.promise(() => h.mock.waitForResponseRequests(2))
        const outputs = new Map(
          functionCallOutputs(next!).map((o) => [o.callId, JSON.parse(String(o.output)) as unknown])
        )
        expect(outputs).toEqual(
          new Map([
            [`call_${firstId}`, { answers: { [firstId]: { answers: ["A"] } } }],
            [`call_${secondId}`, { answers: { [secondId]: { answers: ["B"] } } }]
          ])
        )
      })
    )
  })

  it("default turn: update_plan three times gives three checklist snapshots", async () => {
    await withCodexHarness({ mode: "default" }, (h) =>
      Effect.gen(function* () {
        // The model speaks the core's snake_case (`in_progress`); the app-server reports `inProgress`.
        const update = (
          plan: ReadonlyArray<{ step: string; status: string }>,
          explanation?: string
        ): ScriptedOutput => ({
          type: "function_call",
          name: "update_plan",
          arguments: {
            ...(explanation !== undefined ? { explanation } : {}),
            plan: plan.map((s) => ({ ...s, status: s.status === "inProgress" ? "in_progress" : s.status }))
          }
        })
        h.mock.script(
          {
            output: [
              update(
                [
                  { step: "Read the code", status: "inProgress" },
                  { step: "Write it", status: "pending" }
                ],
                "Starting."
              )
            ]
          },
          {
            output: [
              update([
                { step: "Read the code", status: "completed" },
                { step: "Write it", status: "inProgress" },
                { step: "Test it", status: "inProgress" }
              ])
            ]
          },
          {
            output: [
              update([
                { step: "Read the code", status: "completed" },
                { step: "Write it", status: "completed" },
                { step: "Test it", status: "completed" }
              ])
            ]
          },
          { output: [{ type: "text", text: "All done." }] }
        )
        const turnId = yield* h.session.startTurn({ text: "Implement it." })
        yield* h.waitForEvent("turn.completed")
        const snapshots = ofType(h.events, "turn.plan.updated")
        expect(snapshots.map((e) => e.turnId)).toEqual([turnId, turnId, turnId])
        expect(snapshots.map((e) => e.payload.plan)).toEqual([
          {
            explanation: "Starting.",
            source: "native",
            steps: [
              { step: "Read the code", status: "inProgress" },
              { step: "Write it", status: "pending" }
            ]
          },
          {
            explanation: null,
            source: "native",
            steps: [
              { step: "Read the code", status: "completed" },
              { step: "Write it", status: "inProgress" },
              { step: "Test it", status: "inProgress" }
            ]
          },
          {
            explanation: null,
            source: "native",
            steps: [
              { step: "Read the code", status: "completed" },
              { step: "Write it", status: "completed" },
              { step: "Test it", status: "completed" }
            ]
          }
        ])
        expect(ofType(h.events, "turn.started")[0]?.payload.mode).toBe("default")
      })
    )
  })

  it("command approval: options from the native decision set; the chosen one reaches Codex and the command runs", async () => {
    await withCodexHarness({ mode: "default", adapter: { approvalPolicy: "on-request" } }, (h) =>
      Effect.gen(function* () {
        h.mock.script(
          {
            output: [
              {
                type: "function_call",
                name: "exec_command",
                arguments: {
                  cmd: "echo planbridge-ran > marker.txt",
                  sandbox_permissions: "require_escalated",
                  justification: "Write a marker file",
                  tty: false
                }
              }
            ]
          },
          { output: [{ type: "text", text: "Marker written." }] }
        )
        yield* h.session.startTurn({ text: "Write the marker." })
        const opened = yield* h.waitForEvent("request.opened")
        expect(opened.payload).toMatchObject({
          requestKind: "approval",
          detail: "Write a marker file",
          native: { method: "item/commandExecution/requestApproval" }
        })
        expect(opened.payload.options.map((o) => [o.id, o.kind])).toEqual([
          ["accept", "allow_once"],
          ["acceptWithExecpolicyAmendment", "allow_always"],
          ["cancel", "other"]
        ])
        // 0.171.0 offers no plain "decline" here: an option it did not offer is refused, nothing sent.
        yield* Effect.promise(() =>
          expectAdapterError(
            h.session.respondToRequest(opened.payload.requestId, "decline" as OptionId),
            "invalid_answer"
          )
        )
        yield* Effect.promise(() =>
          expectAdapterError(
            h.session.respondToRequest("codex:nope" as RequestId, "accept" as OptionId),
            "request_not_pending"
          )
        )
        yield* h.session.respondToRequest(opened.payload.requestId, "accept" as OptionId)
        yield* h.waitForEvent("turn.completed")
        expect(readFileSync(join(h.cwd, "marker.txt"), "utf8")).toBe("planbridge-ran\n")
        expect(ofType(h.events, "request.resolved").map((e) => e.payload)).toEqual([
          { requestId: opened.payload.requestId, resolution: "responded", optionId: "accept" }
        ])
        expect(
          ofType(h.events, "item.completed")
            .filter((e) => e.payload.itemType === "command")
            .map((e) => e.payload.status)
        ).toEqual(["completed"])
        yield* Effect.promise(() =>
          expectAdapterError(
            h.session.respondToRequest(opened.payload.requestId, "accept" as OptionId),
            "request_not_pending"
          )
        )
      })
    )
  })

  it("a turn started while a non-blocking question waits becomes steering input, and says so", async () => {
    await withCodexHarness({ mode: "default" }, (h) =>
      Effect.gen(function* () {
        h.mock.script(
          {
            output: [
              {
                type: "function_call",
                name: "request_user_input",
                arguments: {
                  questions: [
                    {
                      id: "a",
                      header: "A",
                      question: "A or B?",
                      options: [
                        { label: "A", description: "a" },
                        { label: "B", description: "b" }
                      ]
                    }
                  ]
                }
              }
            ]
          },
          { output: [{ type: "text", text: "Done with both." }] }
        )
        const first = yield* h.session.startTurn({ text: "Start." })
        const requested = yield* h.waitForEvent("user-input.requested")
        expect(requested.payload.prompt.blocking).toBe(false)
        const second = yield* h.session.startTurn({ text: "Also consider this." })
        expect(second).toBe(first)
        const steered = yield* h.waitForEvent("runtime.warning", (e) => e.payload.code === "codex.steered")
        expect(steered.turnId).toBe(first)
        yield* h.session.respondToUserInput({
          promptId: requested.payload.prompt.promptId,
          answers: [{ questionId: "a" as QuestionId, selectedOptionIds: ["opt-0" as OptionId] }]
        })
        yield* h.waitForEvent("turn.completed")
        expect(
          ofType(h.events, "item.completed")
            .filter((e) => e.payload.itemType === "user_message")
            .map((e) => e.payload.text)
        ).toEqual(["Start.", "Also consider this."])
      })
    )
  })

  it("an answer that cannot be recorded is not sent; once recording works it goes through", async () => {
    let failResolutions = true
    const emit = (event: RuntimeEvent) =>
      failResolutions && event.type === "user-input.resolved"
        ? Effect.fail(new EmitError({ cause: new Error("database unavailable") }))
        : Effect.void
    await withCodexHarness({ mode: "plan", emit }, (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [askTwoQuestions] }, { output: [{ type: "text", text: "Thanks." }] })
        yield* h.session.startTurn({ text: "Plan it." })
        const requested = yield* h.waitForEvent("user-input.requested")
        const answer = {
          promptId: requested.payload.prompt.promptId,
          answers: [{ questionId: "db_choice" as QuestionId, selectedOptionIds: ["opt-0" as OptionId] }]
        }
        const wireBefore = h.traffic.length
        const refused = yield* Effect.flip(h.session.respondToUserInput(answer))
        expect(refused.message).toContain("could not record user-input.resolved")
        expect(h.traffic.slice(wireBefore).filter((t) => t.entry.dir === "out")).toEqual([])
        failResolutions = false
        yield* h.session.respondToUserInput(answer)
        yield* h.waitForEvent("turn.completed")
        expect(ofType(h.events, "user-input.resolved").map((e) => e.payload.resolution)).toEqual(["answered"])
      })
    )
  })
})
