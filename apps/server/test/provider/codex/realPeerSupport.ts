import type { RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { expect } from "vitest"
import { AdapterError, type AdapterErrorKind } from "../../../src/provider/ProviderAdapter.ts"
import type { ScriptedOutput } from "../../support/mockResponsesModel.ts"
import type { CodexHarness } from "./harness.ts"

/** Shared model scripts and assertions of the real-peer Codex tests. */

export const askTwoQuestions: ScriptedOutput = {
  type: "function_call",
  name: "request_user_input",
  arguments: {
    questions: [
      {
        id: "db_choice",
        header: "Database",
        question: "Which database should the service use?",
        options: [
          { label: "PostgreSQL (Recommended)", description: "Relational, strong consistency." },
          { label: "SQLite", description: "Embedded, zero-ops." }
        ]
      },
      {
        id: "test_scope",
        header: "Tests",
        question: "How much test coverage do you want?",
        options: [
          { label: "Unit only (Recommended)", description: "Fast feedback." },
          { label: "Unit + integration", description: "Slower but thorough." }
        ]
      }
    ]
  }
}

export const PLAN_MARKDOWN =
  "# Build the service\n\n1. Set up SQLite.\n2. Implement the HTTP handlers.\n3. Add unit tests, plus fuzzing.\n"
export const planReply: ScriptedOutput = {
  type: "text",
  text: `Thanks for the answers. Here is my plan.\n\n<proposed_plan>\n${PLAN_MARKDOWN}</proposed_plan>\n`,
  chunkSize: 9
}

export const ofType = <T extends RuntimeEvent["type"]>(events: ReadonlyArray<RuntimeEvent>, type: T) =>
  events.filter((e): e is Extract<RuntimeEvent, { readonly type: T }> => e.type === type)

export const expectAdapterError = async (effect: Effect.Effect<unknown, AdapterError>, reason: AdapterErrorKind) => {
  const error = await Effect.runPromise(Effect.flip(effect))
  expect(error).toBeInstanceOf(AdapterError)
  expect(error.kind).toBe(reason)
}

/** What a transcript of this harness looks like to `replay`. */
export const transcriptOf = (h: CodexHarness, initialMode: "plan" | "default") => [
  { dir: "meta", provider: "codex", codexVersion: "0.171.0", startedAt: "2026-11-30T00:00:00.000Z", initialMode },
  ...h.traffic.map(({ t, entry }) => ({ t, ...entry }))
]
export const withoutEnvelope = (events: ReadonlyArray<RuntimeEvent>) =>
  events.map(({ eventId: _id, createdAt: _at, ...rest }) => rest)
