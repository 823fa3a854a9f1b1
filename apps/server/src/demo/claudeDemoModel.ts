import {
  lastToolResults,
  toolResultText,
  withoutSystemReminders,
  type ContentBlock,
  type MessagesRequest,
  type ScriptedBlock,
  type ScriptedTurn
} from "./mockMessagesModel.ts"
import {
  checklistAt,
  DEMO_CHECKLIST_STEPS,
  DEMO_CHECKLIST_UPDATES,
  DEMO_COMMAND,
  DEMO_PLAN_MARKDOWN,
  HELP_TEXT,
  IMPLEMENT_TEXT,
  scenarioOf,
  type DemoScenario
} from "./scenarios.ts"

/**
 * The demo's scripted Messages-API model, for the real Claude Code CLI (Agent SDK and
 * claude-agent-acp). Stateless like the Codex one: the scenario comes from the turn's user
 * message, the step from how many tool-using answers followed it.
 */

const text = (value: string): ScriptedBlock => ({ type: "text", text: value })
const tool = (name: string, input: unknown): ScriptedBlock => ({ type: "tool_use", name, input })

/** AskUserQuestion: a single choice and a multi-select; both take free text ("Other") too. */
const askQuestions = tool("AskUserQuestion", {
  questions: [
    {
      question: "Which language should the service be written in?",
      header: "Language",
      options: [
        { label: "TypeScript", description: "Node 20, typed." },
        { label: "Go", description: "One static binary." }
      ],
      multiSelect: false
    },
    {
      question: "Which extras should it have?",
      header: "Extras",
      options: [
        { label: "Logging", description: "JSON lines on stdout." },
        { label: "Metrics", description: "A /metrics endpoint." },
        { label: "Docker", description: "A Dockerfile." }
      ],
      multiSelect: true
    }
  ]
})

const todoWrite = (n: number) =>
  tool("TodoWrite", {
    todos: DEMO_CHECKLIST_STEPS.map((content, i) => ({
      content,
      status: checklistAt(n)[i],
      activeForm: `${content} (in progress)`
    }))
  })

/** In plan mode the CLI names the file its plan goes to; ExitPlanMode then reads it from there. */
const planFilePath = (body: MessagesRequest): string | undefined =>
  /\/[^\s"'`\\]*\/\.claude\/plans\/[^\s"'`\\]+\.md/.exec(JSON.stringify(body.system ?? ""))?.[0] ??
  /\/[^\s"'`\\]*\/\.claude\/plans\/[^\s"'`\\]+\.md/.exec(JSON.stringify(body.messages ?? []))?.[0]

const proposePlan = (body: MessagesRequest): ReadonlyArray<ScriptedTurn> => {
  const path = planFilePath(body)
  const exit = { blocks: [text("Here is my plan."), tool("ExitPlanMode", { plan: DEMO_PLAN_MARKDOWN })] }
  return path === undefined
    ? [exit]
    : [{ blocks: [tool("Write", { file_path: path, content: DEMO_PLAN_MARKDOWN })] }, exit]
}

/** What the model says after the plan decision: the CLI's tool result tells approval from feedback. */
const afterPlan = (body: MessagesRequest): ScriptedTurn => {
  const result = lastToolResults(body)[0]
  const said = result === undefined ? "" : withoutSystemReminders(toolResultText(result))
  return result?.is_error === true
    ? { blocks: [text(`Understood, the plan was not approved: ${said}`)] }
    : { blocks: [text("The plan is approved; I would start with greet.js now.")] }
}

export interface ClaudeDemoOptions {
  /** Whether the program offers AskUserQuestion (claude-agent-acp 0.23.1 does not). */
  readonly questions: boolean
}

const scriptOf = (
  scenario: DemoScenario,
  body: MessagesRequest,
  options: ClaudeDemoOptions
): ReadonlyArray<ScriptedTurn> => {
  switch (scenario) {
    case "questions":
      return options.questions
        ? [{ blocks: [text("A few questions first."), askQuestions] }, ...proposePlan(body), afterPlan(body)]
        : [...proposePlan(body), afterPlan(body)]
    case "implement":
      return [{ blocks: [text(IMPLEMENT_TEXT)] }]
    case "plan":
      return [...proposePlan(body), afterPlan(body)]
    case "checklist":
      return [
        ...Array.from({ length: DEMO_CHECKLIST_UPDATES }, (_, n) => ({ blocks: [todoWrite(n)] })),
        { blocks: [text("All three steps are done.")] }
      ]
    case "command":
      return [
        { blocks: [tool("Bash", { command: DEMO_COMMAND, description: "Write planbridge-demo.txt" })] },
        { blocks: [text("The command ran: see planbridge-demo.txt.")] }
      ]
    case "help":
      return [{ blocks: [text(HELP_TEXT)] }]
  }
}

const isToolResult = (block: ContentBlock) => block.type === "tool_result"
const blocksOf = (content: string | ReadonlyArray<ContentBlock>): ReadonlyArray<ContentBlock> =>
  typeof content === "string" ? [{ type: "text", text: content }] : content

/**
 * The user's own text in a message: its last text block without the CLI's system reminders
 * (claude-agent-acp puts caveats and local-command output in blocks before the user's text).
 */
const userText = (content: string | ReadonlyArray<ContentBlock>): string =>
  blocksOf(content)
    .filter((b) => b.type === "text")
    .map((b) => withoutSystemReminders(b.text ?? ""))
    .filter((text) => text !== "")
    .at(-1) ?? ""

export const claudeDemoTurn =
  (options: ClaudeDemoOptions) =>
  (body: MessagesRequest): ScriptedTurn => {
    const messages = body.messages ?? []
    // The turn starts at the last user message that carries text of the user's and no tool result.
    const start = messages.findLastIndex(
      (m) => m.role === "user" && !blocksOf(m.content).some(isToolResult) && userText(m.content) !== ""
    )
    const step = messages.slice(start + 1).filter((m) => m.role === "assistant").length
    const script = scriptOf(scenarioOf(start === -1 ? "" : userText(messages[start]!.content)), body, options)
    return step < script.length ? script[step]! : { blocks: [text("Done.")] }
  }
