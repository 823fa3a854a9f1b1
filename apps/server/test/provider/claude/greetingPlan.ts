import type { MessagesRequest, ScriptedResponse } from "../../support/mockMessagesModel.ts"

/**
 * One scripted Claude plan-mode turn the server tests share: AskUserQuestion (style: Formal or
 * Casual), the plan written to the plan file the CLI names, ExitPlanMode, and a reply once the
 * plan is approved.
 */
export const GREETING_STYLE = "Which greeting style should the CLI use?"
export const GREETING_PLAN = "# Plan: greeting CLI\n\n1. Create greet.js.\n"

/** The plan file path the CLI names in a request (`…/.claude/plans/<slug>.md`). */
export const planFilePath = (body: MessagesRequest): string => {
  const match = /\/[^\s"'`\\]*\/\.claude\/plans\/[^\s"'`\\]+\.md/.exec(JSON.stringify(body))
  if (match === null) throw new Error("the request names no plan file")
  return match[0]
}

export const greetingPlanTurn = (): ReadonlyArray<ScriptedResponse> => [
  {
    blocks: [
      {
        type: "tool_use",
        name: "AskUserQuestion",
        input: {
          questions: [
            {
              question: GREETING_STYLE,
              header: "Style",
              options: [
                { label: "Formal", description: "Good day." },
                { label: "Casual", description: "Hey!" }
              ],
              multiSelect: false
            }
          ]
        }
      }
    ]
  },
  (body: MessagesRequest) => ({
    blocks: [{ type: "tool_use", name: "Write", input: { file_path: planFilePath(body), content: GREETING_PLAN } }]
  }),
  { blocks: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] },
  { blocks: [{ type: "text", text: "Approved; starting." }] }
]
