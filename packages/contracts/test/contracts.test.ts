import { Arbitrary, Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  PlanSnapshot,
  ProviderCapabilities,
  RuntimeEvent,
  RuntimeEventMembers,
  RuntimeEventTypes,
  UserInputAnswer,
  UserInputPrompt,
  decodeRuntimeEventSync,
  encodeRuntimeEventSync
} from "../src/index.ts"
import { canonicalJson } from "./support/markdown.ts"

const envelope = {
  eventId: "evt-1",
  provider: "codex",
  threadId: "thr-1",
  turnId: "turn-1",
  createdAt: "2026-11-30T10:00:00.000Z"
}

const decodeError = (input: unknown): string => {
  try {
    decodeRuntimeEventSync(input)
  } catch (error) {
    return String(error)
  }
  throw new Error("expected a decode failure")
}

describe("RuntimeEvent decoding", () => {
  it("names the failing path of a malformed plan step", () => {
    const message = decodeError({
      ...envelope,
      type: "turn.plan.updated",
      payload: { plan: { explanation: null, steps: [{ step: "a", status: "in_progress" }], source: "native" } }
    })
    expect(message).toContain(`["payload"]["plan"]["steps"][0]["status"]`)
  })

  it("reports an unknown event type at the type field, not as a 22-member mismatch", () => {
    const message = decodeError({ ...envelope, type: "turn.exploded", payload: {} })
    expect(message).toContain(`["type"]`)
    expect(message.length).toBeLessThan(800)
  })

  it("requires a turn and an item on content deltas", () => {
    const { turnId: _t, ...withoutTurn } = envelope
    expect(
      decodeError({
        ...withoutTurn,
        type: "content.delta",
        itemId: "i",
        payload: { streamKind: "plan_text", delta: "x" }
      })
    ).toContain(`["turnId"]`)
    expect(
      decodeError({ ...envelope, type: "content.delta", payload: { streamKind: "plan_text", delta: "x" } })
    ).toContain(`["itemId"]`)
  })

  it("rejects an empty id, a bad timestamp and an unknown provider slug with their paths", () => {
    expect(
      decodeError({ ...envelope, eventId: "", type: "runtime.warning", payload: { code: "c", message: "m" } })
    ).toContain(`["eventId"]`)
    expect(
      decodeError({
        ...envelope,
        createdAt: "yesterday",
        type: "runtime.warning",
        payload: { code: "c", message: "m" }
      })
    ).toContain(`["createdAt"]`)
    expect(
      decodeError({ ...envelope, provider: "Codex!", type: "runtime.warning", payload: { code: "c", message: "m" } })
    ).toContain(`["provider"]`)
  })

  it("accepts two in-progress steps and an empty checklist (the peer does)", () => {
    const two = decodeRuntimeEventSync({
      ...envelope,
      type: "turn.plan.updated",
      payload: {
        plan: {
          explanation: null,
          steps: [
            { step: "a", status: "inProgress" },
            { step: "b", status: "inProgress" }
          ],
          source: "native"
        }
      }
    })
    expect(two.type).toBe("turn.plan.updated")
    const empty = decodeRuntimeEventSync({
      ...envelope,
      type: "turn.plan.updated",
      payload: { plan: { explanation: null, steps: [], source: "native" } }
    })
    expect(empty.type === "turn.plan.updated" && empty.payload.plan.steps).toEqual([])
  })

  it("keeps the raw native payload verbatim", () => {
    const raw = {
      source: "codex.app-server.notification",
      method: "turn/plan/updated",
      payload: { a: [1, { b: null }] }
    }
    const event = decodeRuntimeEventSync({
      ...envelope,
      type: "runtime.warning",
      payload: { code: "c", message: "m" },
      raw
    })
    expect(event.raw).toEqual(raw)
  })
})

describe("prompts", () => {
  const question = {
    id: "db",
    label: "Which database?",
    options: [{ id: "pg", label: "PostgreSQL" }],
    multiSelect: false,
    allowFreeform: true,
    secret: false,
    required: true
  }

  it("rejects a prompt without questions and a question with neither options nor free form", () => {
    const decode = Schema.decodeUnknownSync(UserInputPrompt)
    expect(() => decode({ promptId: "p", questions: [], source: "native", blocking: true })).toThrow(/\["questions"\]/)
    expect(() =>
      decode({
        promptId: "p",
        questions: [{ ...question, options: [], allowFreeform: false }],
        source: "native",
        blocking: true
      })
    ).toThrow(/\["questions"\]\[0\]/)
  })

  it("accepts a free-form-only question (an elicitation text field)", () => {
    const decoded = Schema.decodeUnknownSync(UserInputPrompt)({
      promptId: "p",
      questions: [{ ...question, options: [] }],
      source: "synthesized",
      blocking: true
    })
    expect(decoded.questions[0].options).toEqual([])
  })

  it("rejects an answer whose selection is not a list of option ids", () => {
    expect(() =>
      Schema.decodeUnknownSync(UserInputAnswer)({
        promptId: "p",
        answers: [{ questionId: "db", selectedOptionIds: "pg" }]
      })
    ).toThrow(/\["answers"\]\[0\]\["selectedOptionIds"\]/)
  })
})

describe("round trips", () => {
  it("lists every event type exactly once", () => {
    expect(new Set(RuntimeEventTypes).size).toBe(RuntimeEventMembers.length)
    expect(RuntimeEventTypes).toContain("user-input.resolved")
  })

  const roundTrip = <S extends Schema.Codec<unknown, unknown>>(schema: S, count: number) =>
    Effect.gen(function* () {
      const samples = yield* Arbitrary.sampleEffect(Arbitrary.schema(schema), { count })
      for (const value of samples) {
        const wire = JSON.parse(JSON.stringify(Schema.encodeSync(schema)(value)))
        // Compared as JSON: the only thing JSON itself cannot carry is the sign of -0 inside raw payloads.
        expect(canonicalJson(Schema.decodeUnknownSync(schema)(wire))).toBe(canonicalJson(value))
      }
      return samples.length
    })

  for (const member of RuntimeEventMembers) {
    const type = member.fields.type.schema.literal
    it(`${type}: generated values survive encode → JSON → decode`, async () => {
      const n = await Effect.runPromise(roundTrip(member, 25))
      expect(n).toBe(25)
    })
  }

  for (const [name, schema] of [
    ["PlanSnapshot", PlanSnapshot],
    ["ProviderCapabilities", ProviderCapabilities],
    ["UserInputPrompt", UserInputPrompt],
    ["UserInputAnswer", UserInputAnswer]
  ] as const) {
    it(`${name}: generated values survive encode → JSON → decode`, async () => {
      expect(await Effect.runPromise(roundTrip(schema, 25))).toBe(25)
    })
  }

  it("the whole union encodes back to what was decoded", () => {
    const input = {
      ...envelope,
      type: "plan.proposed.completed",
      payload: { planId: "turn-1-plan", markdown: "# Plan\n" }
    }
    const decoded = decodeRuntimeEventSync(input)
    expect(encodeRuntimeEventSync(decoded)).toEqual(input)
    expect(Exit.isSuccess(Schema.decodeUnknownExit(RuntimeEvent)(input))).toBe(true)
  })
})
