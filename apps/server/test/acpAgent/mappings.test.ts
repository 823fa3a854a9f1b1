import type { AnyMessage } from "@agentclientprotocol/sdk/unstable"
import type { UserInputPrompt } from "@planbridge/contracts"
import { Schema } from "effect"
import { PassThrough } from "node:stream"
import { describe, expect, it } from "vitest"
import { planEntries } from "../../src/acpAgent/EventUpdates.ts"
import { idOfHead } from "../../src/acpAgent/LineHead.ts"
import { answersOfForm, elicitationForm, questionPermission, secretRefusal } from "../../src/acpAgent/QuestionForms.ts"
import { stdioMessages } from "../../src/acpAgent/StdioMessages.ts"
import { UserInputPrompt as PromptSchema } from "@planbridge/contracts"

const prompt: UserInputPrompt = Schema.decodeUnknownSync(PromptSchema)({
  promptId: "p-1",
  questions: [
    {
      id: "db",
      label: "Which database?",
      options: [
        { id: "opt-0", label: "PostgreSQL" },
        { id: "opt-1", label: "SQLite" }
      ],
      multiSelect: false,
      allowFreeform: true,
      secret: false,
      required: true
    },
    {
      id: "name",
      label: "Its name?",
      options: [],
      multiSelect: false,
      allowFreeform: true,
      secret: false,
      required: true
    }
  ],
  source: "native",
  blocking: true
})

describe("question cards as editor requests", () => {
  it("a form field per choice and per free text; answers read back, unknown option ids dropped", () => {
    const form = elicitationForm("s-1", "p-1", prompt)
    expect(form).toMatchObject({ mode: "form", sessionId: "s-1", toolCallId: "p-1" })
    expect(Object.keys(form.requestedSchema.properties ?? {})).toEqual(["db", "db__text", "name"])
    expect(answersOfForm(prompt, { db: "opt-9", db__text: "  ", name: "svc" })).toEqual([
      { questionId: "name", text: "svc" }
    ])
    expect(answersOfForm(prompt, { db: "opt-1", db__text: "with WAL" })).toEqual([
      { questionId: "db", selectedOptionIds: ["opt-1"], text: "with WAL" }
    ])
  })

  it("a free-text-only question has no permission form; a secret one is refused with where to answer it", () => {
    expect(questionPermission("s-1", "p-1", prompt.questions[1]!)).toBeUndefined()
    expect(questionPermission("s-1", "p-1", prompt.questions[0])?.options.map((o) => o.optionId)).toEqual([
      "opt-0",
      "opt-1",
      "planbridge-skip"
    ])
    expect(secretRefusal(prompt)).toBeUndefined()
    const secret = { ...prompt, questions: [{ ...prompt.questions[0], secret: true }] as const }
    expect(secretRefusal(secret)).toContain("planbridge prompts answer p-1")
  })

  it("a cancelled checklist step is completed for ACP, marked as cancelled in _meta", () => {
    expect(planEntries({ explanation: null, source: "native", steps: [{ step: "a", status: "cancelled" }] })).toEqual([
      { content: "a", priority: "medium", status: "completed", _meta: { planbridge: { status: "cancelled" } } }
    ])
  })
})

describe("the stdio reader", () => {
  it("finds a top-level id in a line's head, never a nested one", () => {
    expect(idOfHead('{"jsonrpc":"2.0","id":7,"method":"x","params":{"text":"…')).toBe(7)
    expect(idOfHead('{"params":{"id":"inner","text":"a\\"id\\":1"},"id":"outer","m')).toBe("outer")
    expect(idOfHead('{"method":"x","params":{"id":3')).toBeNull()
  })

  it("refuses a line over the bound under its id and reads the next one", async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const stream = stdioMessages(input, output, 64)
    const reader = stream.readable.getReader()
    const replies: Array<string> = []
    output.on("data", (chunk: Buffer) => replies.push(String(chunk)))
    input.write(`{"jsonrpc":"2.0","id":5,"method":"m","params":{"t":"${"x".repeat(40)}`)
    input.write(`${"y".repeat(100)}"}}\n{"jsonrpc":"2.0","id":6,"method":"ok"}\n[1]\n`)
    const next: AnyMessage | undefined = (await reader.read()).value
    expect(next).toEqual({ jsonrpc: "2.0", id: 6, method: "ok" })
    input.end()
    expect((await reader.read()).done).toBe(true)
    const lines = replies
      .join("")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as unknown)
    expect(lines).toEqual([
      { jsonrpc: "2.0", id: 5, error: { code: -32600, message: expect.stringContaining("longer than 64 bytes") } },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: "JSON-RPC batches are not supported" } }
    ])
  })
})
