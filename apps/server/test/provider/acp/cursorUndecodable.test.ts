import { describe, expect, it } from "vitest"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { makeStepper } from "./stepper.ts"

/**
 * Cursor's extension params that do not decode: answered at once, with one `request_invalid`
 * warning worded with the schema's own message (what was expected, at which path), as the rest
 * of ACP's decodes word theirs.
 */

const inTurn = () => {
  const t = makeStepper(cursorProfile())
  t.configure(
    { protocolVersion: 1, agentCapabilities: { loadSession: true }, agentInfo: { name: "x", version: "1.2.3" } },
    { sessionId: "s1", modes: { currentModeId: "agent", availableModes: [{ id: "agent", name: "agent" }] } },
    { cwd: "/w", resumed: false }
  )
  t.startTurn()
  return t
}

describe("undecodable Cursor extension params", () => {
  it("words a question's warning with the bad field's path", () => {
    const t = inTurn()
    const asked = t.request(3, "cursor/ask_question", { questions: [{ id: "q", prompt: 5, options: [] }] })
    expect(asked.reply).toEqual({
      result: { outcome: { outcome: "skipped", reason: "the question could not be displayed" } }
    })
    expect(asked.drafts).toMatchObject([
      {
        type: "runtime.warning",
        payload: {
          code: "request_invalid",
          message: 'cursor/ask_question cannot be shown: Expected string\n  at ["questions"][0]["prompt"]'
        }
      }
    ])
    expect(t.pending()).toEqual([])
  })

  it("words a plan's warning with the missing field's path", () => {
    const t = inTurn()
    const proposed = t.request(4, "cursor/create_plan", { name: "P" })
    expect(proposed.reply).toEqual({ result: { outcome: { outcome: "cancelled" } } })
    expect(proposed.drafts).toMatchObject([
      {
        type: "runtime.warning",
        payload: { code: "request_invalid", message: 'cursor/create_plan cannot be shown: Missing key\n  at ["plan"]' }
      }
    ])
  })

  it("words a todo update's warning with the bad field's path", () => {
    const t = inTurn()
    const update = t.request(5, "cursor/update_todos", { todos: [{ id: "a", status: 3 }] })
    expect(update.reply).toEqual({ error: { code: -32602, message: "Invalid params" } })
    expect(update.drafts).toMatchObject([
      {
        type: "runtime.warning",
        payload: {
          code: "request_invalid",
          message: 'todo update did not decode: Expected string | null\n  at ["todos"][0]["status"]'
        }
      }
    ])
  })
})
