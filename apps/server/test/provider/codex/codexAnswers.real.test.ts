import type { OptionId, QuestionId, ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { codexReplayMapping } from "../../../src/provider/codex/CodexReplay.ts"
import { replay } from "../../../src/provider/kernel/replay.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { functionCallOutputs } from "../../support/mockResponsesModel.ts"
import { withCodexHarness } from "./harness.ts"
import { askTwoQuestions, ofType, transcriptOf, withoutEnvelope } from "./realPeerSupport.ts"

/**
 * How canonical answers reach the real `codex app-server` 0.171.0: exactly what Codex's own TUI
 * (`codex-rs/tui/src/bottom_pane/request_user_input/mod.rs`, `submit_answers`) sends, asserted
 * on the `function_call_output` the scripted model receives in its next request.
 */

beforeAll(() => assertLoopbackOnly())
const started = Date.now()
afterAll(() => {
  console.info(`codexAnswers.real.test.ts wall time: ${Date.now() - started} ms`)
})

describe("Codex answers as Codex's own client sends them", () => {
  it("free text alone goes after the TUI's 'None of the above' row; an option's note after its label", async () => {
    await withCodexHarness({ mode: "plan", threadId: "thread-answers" as ThreadId }, (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [askTwoQuestions] }, { output: [{ type: "text", text: "Noted." }] })
        yield* h.session.startTurn({ text: "Ask me." })
        const requested = yield* h.waitForEvent("user-input.requested")
        const prompt = requested.payload.prompt
        // 0.171.0 marks every question isOther: free text is always allowed next to the options.
        expect(prompt.questions.map((q) => q.allowFreeform)).toEqual([true, true])
        const answers = [
          { questionId: "db_choice" as QuestionId, text: "DuckDB, embedded" },
          { questionId: "test_scope" as QuestionId, selectedOptionIds: ["opt-1" as OptionId], text: "plus fuzzing" }
        ]
        yield* h.session.respondToUserInput({ promptId: prompt.promptId, answers })
        yield* h.waitForEvent("turn.completed")

        const [, next] = yield* Effect.promise(() => h.mock.waitForResponseRequests(2))
        const outputs = functionCallOutputs(next!)
        expect(outputs).toHaveLength(1)
        expect(JSON.parse(String(outputs[0]!.output))).toEqual({
          answers: {
            db_choice: { answers: ["None of the above", "user_note: DuckDB, embedded"] },
            test_scope: { answers: ["Unit + integration", "user_note: plus fuzzing"] }
          }
        })
        // What the server records is what the agent got: no option on db_choice, the text as typed.
        expect(ofType(h.events, "user-input.resolved").map((e) => e.payload.answers)).toEqual([answers])
        const replayed = yield* replay(codexReplayMapping, transcriptOf(h, "plan"), {
          threadId: "thread-answers" as ThreadId
        })
        expect(withoutEnvelope(replayed)).toEqual(withoutEnvelope(h.events))
      })
    )
  })

  it("a skipped question and an empty dismissal reach the model as the TUI sends them: every question, [] when unanswered", async () => {
    await withCodexHarness({ mode: "plan", threadId: "thread-skips" as ThreadId }, (h) =>
      Effect.gen(function* () {
        h.mock.script(
          { output: [askTwoQuestions] },
          { output: [askTwoQuestions] },
          { output: [{ type: "text", text: "Noted." }] }
        )
        yield* h.session.startTurn({ text: "Ask me twice." })
        const first = yield* h.waitForEvent("user-input.requested")
        // Only the first question answered; the second skipped.
        const answers = [{ questionId: "db_choice" as QuestionId, selectedOptionIds: ["opt-1" as OptionId] }]
        yield* h.session.respondToUserInput({ promptId: first.payload.prompt.promptId, answers })
        const second = yield* h.waitForEvent(
          "user-input.requested",
          (e) => e.payload.prompt.promptId !== first.payload.prompt.promptId
        )
        // The whole second prompt dismissed without an answer.
        yield* h.session.dismissUserInput(second.payload.prompt.promptId, "empty")
        yield* h.waitForEvent("turn.completed")

        const requests = yield* Effect.promise(() => h.mock.waitForResponseRequests(3))
        const last = (n: number) => JSON.parse(String(functionCallOutputs(requests[n]!).at(-1)!.output)) as unknown
        expect(last(1)).toEqual({
          answers: { db_choice: { answers: ["SQLite"] }, test_scope: { answers: [] } }
        })
        expect(last(2)).toEqual({ answers: { db_choice: { answers: [] }, test_scope: { answers: [] } } })
        // Recorded as the person left them: one answer, then an empty prompt.
        expect(ofType(h.events, "user-input.resolved").map((e) => [e.payload.resolution, e.payload.answers])).toEqual([
          ["answered", answers],
          ["empty", []]
        ])
        const replayed = yield* replay(codexReplayMapping, transcriptOf(h, "plan"), {
          threadId: "thread-skips" as ThreadId
        })
        expect(withoutEnvelope(replayed)).toEqual(withoutEnvelope(h.events))
      })
    )
  })

  it("0.171.0 never asks a question without options: the call is refused to the model, no prompt opens", async () => {
    await withCodexHarness({ mode: "plan" }, (h) =>
      Effect.gen(function* () {
        h.mock.script(
          {
            output: [
              {
                type: "function_call",
                name: "request_user_input",
                callId: "call_free",
                arguments: { questions: [{ id: "name", header: "Name", question: "What should it be called?" }] }
              }
            ]
          },
          { output: [{ type: "text", text: "Understood." }] }
        )
        yield* h.session.startTurn({ text: "Ask me for a name." })
        yield* h.waitForEvent("turn.completed")
        expect(ofType(h.events, "user-input.requested")).toEqual([])
        const [, next] = yield* Effect.promise(() => h.mock.waitForResponseRequests(2))
        expect(functionCallOutputs(next!).map((o) => String(o.output))).toEqual([
          expect.stringContaining("non-empty options")
        ])
      })
    )
  })
})
