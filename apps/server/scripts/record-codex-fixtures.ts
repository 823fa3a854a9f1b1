/**
 * Records real `codex app-server` transcripts (both directions, JSONL) into `fixtures/codex/`,
 * each with its golden canonical output `<name>.events.jsonl` (what the kernel's `replay` makes of
 * it). Only the model is scripted (loopback mock); everything else is the installed binary.
 *
 *   bash scripts/in-loopback-netns.sh node apps/server/bin/run-ts.mjs apps/server/scripts/record-codex-fixtures.ts [name…]
 *
 * Review a golden file's diff before committing it: it is the specification the replay test holds.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { OperatingMode, OptionId, PromptId, QuestionId, ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import type { IsolatedCodexAdapterOptions } from "../src/provider/codex/CodexAdapter.ts"
import { saveFixture } from "./fixtureRecording.ts"
import { startCodexHarness, type CodexHarness } from "../test/provider/codex/harness.ts"
import { assertLoopbackOnly } from "../test/support/loopbackOnly.ts"
import type { ScriptedOutput } from "../test/support/mockResponsesModel.ts"

/** The installed (pinned) `@openai/codex`: the version every recording names in its meta line. */
const CODEX_VERSION = (createRequire(import.meta.url)("@openai/codex/package.json") as { readonly version: string })
  .version

const question = (id: string, header: string, text: string, labels: ReadonlyArray<string>) => ({
  id,
  header,
  question: text,
  options: labels.map((label) => ({ label, description: `Choose ${label}.` }))
})
const ask = (questions: ReadonlyArray<ReturnType<typeof question>>, callId?: string): ScriptedOutput => ({
  type: "function_call",
  name: "request_user_input",
  arguments: { questions },
  ...(callId !== undefined ? { callId } : {})
})
const text = (value: string): ScriptedOutput => ({ type: "text", text: value, chunkSize: 10 })
const updatePlan = (
  plan: ReadonlyArray<{ step: string; status: "pending" | "in_progress" | "completed" }>,
  explanation?: string
): ScriptedOutput => ({
  type: "function_call",
  name: "update_plan",
  arguments: { ...(explanation !== undefined ? { explanation } : {}), plan }
})
const dbQuestion = question("db_choice", "Database", "Which database should the service use?", [
  "PostgreSQL (Recommended)",
  "SQLite"
])
const testQuestion = question("test_scope", "Tests", "How much test coverage do you want?", [
  "Unit only (Recommended)",
  "Unit + integration"
])
const opt = (n: number) => [`opt-${n}` as OptionId]
const q = (id: string) => id as QuestionId
const within = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.timeoutOrElse(effect, { duration: 20_000, orElse: () => Effect.die(new Error("scenario timed out")) })

interface Scenario {
  readonly mode: OperatingMode
  readonly approvalPolicy?: "never" | "on-request"
  /** Runs first, unrecorded, against the same CODEX_HOME; returns a native thread id to resume. */
  readonly prepare?: (h: CodexHarness) => Effect.Effect<string, unknown>
  readonly run: (h: CodexHarness) => Effect.Effect<void, unknown>
}

const scenarios: Readonly<Record<string, Scenario>> = {
  "plan-two-questions": {
    mode: "plan",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script(
          { output: [ask([dbQuestion, testQuestion])] },
          {
            output: [
              text(
                "Thanks for the answers. Here is my plan.\n\n<proposed_plan>\n# Build the service\n\n1. Use SQLite.\n2. Write unit tests, plus fuzzing.\n</proposed_plan>\n"
              )
            ]
          }
        )
        yield* h.session.startTurn({ text: "Plan a small HTTP service for me." })
        const { payload } = yield* within(h.waitForEvent("user-input.requested"))
        yield* h.session.respondToUserInput({
          promptId: payload.prompt.promptId,
          answers: [
            { questionId: q("db_choice"), selectedOptionIds: opt(1) },
            { questionId: q("test_scope"), selectedOptionIds: opt(0), text: "plus fuzzing" }
          ]
        })
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "parallel-questions": {
    mode: "plan",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script(
          { output: [ask([dbQuestion], "call_db"), ask([testQuestion], "call_tests")] },
          { output: [text("Noted both answers.")] }
        )
        yield* h.session.startTurn({ text: "Ask me two things at once." })
        // The two come one at a time in no fixed order: each is answered by the question it asks.
        const choice: Readonly<Record<string, number>> = { db_choice: 0, test_scope: 1 }
        const answer = (prompt: {
          readonly promptId: PromptId
          readonly questions: ReadonlyArray<{ readonly id: QuestionId }>
        }) =>
          h.session.respondToUserInput({
            promptId: prompt.promptId,
            answers: prompt.questions.map((question) => ({
              questionId: question.id,
              selectedOptionIds: opt(choice[question.id] ?? 0)
            }))
          })
        const first = yield* within(h.waitForEvent("user-input.requested"))
        yield* answer(first.payload.prompt)
        const second = yield* within(
          h.waitForEvent("user-input.requested", (e) => e.payload.prompt.promptId !== first.payload.prompt.promptId)
        )
        yield* answer(second.payload.prompt)
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "default-update-plan": {
    mode: "default",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script(
          {
            output: [
              updatePlan(
                [
                  { step: "Read the code", status: "in_progress" },
                  { step: "Write the module", status: "pending" }
                ],
                "Breaking the work into steps."
              )
            ]
          },
          // Two steps in progress at once: advice to the model, not a rule; accepted as sent.
          {
            output: [
              updatePlan([
                { step: "Read the code", status: "completed" },
                { step: "Write the module", status: "in_progress" },
                { step: "Add tests", status: "in_progress" }
              ])
            ]
          },
          // An empty plan clears the checklist.
          { output: [updatePlan([])] },
          { output: [text("All steps done.")] }
        )
        yield* h.session.startTurn({ text: "Implement it." })
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "default-question-freeform": {
    mode: "default",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [ask([dbQuestion])] }, { output: [text("Using your own choice.")] })
        yield* h.session.startTurn({ text: "Ask me something in default mode." })
        const { payload } = yield* within(h.waitForEvent("user-input.requested"))
        yield* h.session.respondToUserInput({
          promptId: payload.prompt.promptId,
          answers: [{ questionId: q("db_choice"), text: "DuckDB, embedded" }]
        })
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "dismiss-question-empty": {
    mode: "plan",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [ask([dbQuestion])] }, { output: [text("No answer; I will assume PostgreSQL.")] })
        yield* h.session.startTurn({ text: "Plan it, ask if needed." })
        const { payload } = yield* within(h.waitForEvent("user-input.requested"))
        yield* h.session.dismissUserInput(payload.prompt.promptId, "empty")
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "interrupt-pending-question": {
    mode: "plan",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [ask([dbQuestion])] }, { output: [text("Switching to implementation.")] })
        yield* h.session.startTurn({ text: "Plan something." })
        const { payload } = yield* within(h.waitForEvent("user-input.requested"))
        yield* h.session.interrupt()
        yield* within(h.waitForEvent("turn.completed"))
        // Refused by the adapter; nothing reaches the wire.
        const late = yield* Effect.flip(
          h.session.respondToUserInput({
            promptId: payload.prompt.promptId,
            answers: [{ questionId: q("db_choice"), selectedOptionIds: opt(0) }]
          })
        )
        if (late.kind !== "prompt_not_pending")
          return yield* Effect.die(new Error(`expected prompt_not_pending, got ${late.kind}`))
        const next = yield* h.session.startTurn({ text: "Go ahead.", mode: "default" })
        yield* within(h.waitForEvent("turn.completed", (e) => e.turnId === next))
      })
  },
  "plan-unclosed-tag": {
    mode: "plan",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script({
          output: [text("<proposed_plan>\n# Short plan\n\n- Only one step, and the closing tag never comes")]
        })
        yield* h.session.startTurn({ text: "Plan it quickly." })
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "default-command-approval": {
    mode: "default",
    approvalPolicy: "on-request",
    run: (h) =>
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
          { output: [text("Marker written.")] }
        )
        yield* h.session.startTurn({ text: "Write the marker." })
        const { payload } = yield* within(h.waitForEvent("request.opened"))
        yield* h.session.respondToRequest(payload.requestId, "accept" as OptionId)
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "default-steer-nonblocking": {
    mode: "default",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [ask([dbQuestion])] }, { output: [text("Done with both.")] })
        yield* h.session.startTurn({ text: "Start." })
        const { payload } = yield* within(h.waitForEvent("user-input.requested"))
        yield* h.session.startTurn({ text: "Also consider this." })
        yield* h.session.respondToUserInput({
          promptId: payload.prompt.promptId,
          answers: [{ questionId: q("db_choice"), selectedOptionIds: opt(1) }]
        })
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "resume-thread": {
    mode: "default",
    prepare: (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [text("Noted: 42.")] })
        yield* h.session.startTurn({ text: "Remember 42." })
        yield* within(h.waitForEvent("turn.completed"))
        return h.session.nativeThreadId
      }),
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [text("You said 42.")] })
        yield* h.session.startTurn({ text: "What did I say?" })
        yield* within(h.waitForEvent("turn.completed"))
      })
  },
  "kill-pending-question": {
    mode: "plan",
    run: (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [ask([dbQuestion])] })
        yield* h.session.startTurn({ text: "Plan something." })
        yield* within(h.waitForEvent("user-input.requested"))
        process.kill(-h.session.pid, "SIGKILL")
        yield* within(h.waitForEvent("session.exited"))
      })
  }
}

const record = (name: string, scenario: Scenario) =>
  Effect.gen(function* () {
    const home = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "planbridge-codex-home-")))
    const threadId = `codex-fixture-${name}` as ThreadId
    const harness = (adapter: Partial<IsolatedCodexAdapterOptions>) =>
      startCodexHarness({
        mode: scenario.mode,
        threadId,
        adapter: { codexHome: home, approvalPolicy: scenario.approvalPolicy ?? "never", ...adapter }
      })
    const resumed =
      scenario.prepare === undefined
        ? undefined
        : yield* Effect.scoped(Effect.flatMap(harness({ ephemeral: false }), (h) => scenario.prepare!(h)))
    const startedAt = new Date().toISOString()
    const { traffic, live } = yield* Effect.scoped(
      Effect.gen(function* () {
        const h = yield* harness(resumed !== undefined ? { resumeNativeThreadId: resumed } : {})
        yield* scenario.run(h)
        return { traffic: h.traffic, live: h.events }
      })
    ).pipe(Effect.ensuring(Effect.promise(() => rm(home, { recursive: true, force: true }))))
    const lines = [
      {
        dir: "meta",
        provider: "codex",
        codexVersion: CODEX_VERSION,
        startedAt,
        scenario: name,
        initialMode: scenario.mode,
        model: "gpt-5.5",
        approvalPolicy: scenario.approvalPolicy ?? "never"
      },
      ...traffic.map(({ t, entry }) => ({ t, ...entry }))
    ]
    yield* Effect.promise(() => saveFixture({ dir: "codex", name, threadId, lines, live }))
  })

const main = Effect.gen(function* () {
  assertLoopbackOnly()
  const wanted = process.argv.slice(2)
  for (const [name, scenario] of Object.entries(scenarios)) {
    if (wanted.length === 0 || wanted.includes(name)) yield* record(name, scenario)
  }
})

Effect.runPromise(main).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
