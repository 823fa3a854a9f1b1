import type { OptionId, QuestionId } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { lastToolResults, toolResultText, withoutSystemReminders } from "../../support/mockMessagesModel.ts"
import { startClaudeHarness, type ClaudeHarness } from "./harness.ts"

/**
 * How the questions a person leaves unanswered reach the model, on the real Claude Agent SDK
 * 0.3.333 (CLI 2.1.333, which advertises `ask_user_question_unanswered_v1` in `system/init`):
 * a question left out of an answer is `annotations[q].unanswered: "skipped"`, a dismissed card
 * marks every question `dismissed` with the answer `[No preference]`. The scripted model sees
 * the tool result the CLI makes of it.
 */

const STYLE = "Which greeting style should the CLI use?"
const EXTRAS = "Which extras do you want?"
const ask = {
  type: "tool_use" as const,
  name: "AskUserQuestion",
  input: {
    questions: [
      {
        question: STYLE,
        header: "Style",
        options: [
          { label: "Formal", description: "Good day." },
          { label: "Casual", description: "Hey!" }
        ],
        multiSelect: false
      },
      {
        question: EXTRAS,
        header: "Extras",
        options: [
          { label: "Colors", description: "ANSI colors" },
          { label: "Emoji", description: "A wave" }
        ],
        multiSelect: true
      }
    ]
  }
}

let h: ClaudeHarness
beforeAll(async () => {
  assertLoopbackOnly()
  h = await startClaudeHarness({ mode: "plan" })
})
afterAll(async () => {
  await h?.close()
})

const nativeResults = () =>
  h.transcript.flatMap((l) => {
    const msg = l.msg as { kind?: string; toolName?: string; result?: { updatedInput?: Record<string, unknown> } }
    return l.dir === "local" && msg.kind === "canUseTool-result" && msg.toolName === "AskUserQuestion"
      ? [msg.result?.updatedInput ?? {}]
      : []
  })

describe("Claude: unanswered questions as the CLI reads them", () => {
  it("a skipped question and a dismissed card reach the model's tool result", async () => {
    h.mock.script({ blocks: [ask] }, { blocks: [ask] }, { blocks: [{ type: "text", text: "Noted." }] })
    await h.run(h.session.startTurn({ text: "Ask me twice." }))
    const first = await h.waitFor("user-input.requested")
    const [style] = first.payload.prompt.questions
    const casual = style?.options.find((o) => o.label === "Casual")?.id as OptionId
    // Only the style answered: the extras question is skipped.
    await h.run(
      h.session.respondToUserInput({
        promptId: first.payload.prompt.promptId,
        answers: [{ questionId: style?.id as QuestionId, selectedOptionIds: [casual] }]
      })
    )
    const second = await h.waitFor("user-input.requested", {
      where: (e) => e.payload.prompt.promptId !== first.payload.prompt.promptId
    })
    await h.run(h.session.dismissUserInput(second.payload.prompt.promptId, "empty"))
    await h.waitFor("turn.completed")

    const [, afterSkip, afterDismiss] = await h.mock.waitForMainRequests(3)
    const resultText = (body: unknown) =>
      withoutSystemReminders(toolResultText(lastToolResults(body as never)[0] ?? { type: "none" }))
    // Skipped: the model reads which question went unanswered (without the mark it reads only the answer).
    expect(resultText(afterSkip?.body)).toBe(
      `The user answered: "${STYLE}"="Casual". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say. The user skipped question 2; a skip is not a yes.`
    )
    // Dismissed: no answer for the model, and the CLI's tool result keeps how the card ended.
    expect(resultText(afterDismiss?.body)).toBe("The user did not answer the questions.")
    const [skipped, dismissed] = nativeResults()
    expect(skipped).toMatchObject({
      answers: { [STYLE]: "Casual" },
      annotations: { [EXTRAS]: { unanswered: "skipped" } }
    })
    expect(dismissed).toMatchObject({
      answers: { [STYLE]: "[No preference]", [EXTRAS]: "[No preference]" },
      annotations: { [STYLE]: { unanswered: "dismissed" }, [EXTRAS]: { unanswered: "dismissed" } }
    })
    const echoed = h.transcript.flatMap((l) => {
      const msg = l.msg as { type?: string; tool_use_result?: { annotations?: unknown } }
      return l.dir === "in" && msg.type === "user" && msg.tool_use_result?.annotations !== undefined
        ? [msg.tool_use_result.annotations]
        : []
    })
    expect(echoed).toEqual([
      { [EXTRAS]: { unanswered: "skipped" } },
      { [STYLE]: { unanswered: "dismissed" }, [EXTRAS]: { unanswered: "dismissed" } }
    ])
    // Recorded as the person left them: one answer, then an empty prompt.
    expect(
      h.events.flatMap((e) => (e.type === "user-input.resolved" ? [[e.payload.resolution, e.payload.answers]] : []))
    ).toEqual([
      ["answered", [{ questionId: style?.id, selectedOptionIds: [casual] }]],
      ["empty", []]
    ])
  })
})
