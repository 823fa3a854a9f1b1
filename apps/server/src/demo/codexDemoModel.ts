import type { LoggedRequest, ResponsesInputItem, ScriptedOutput, ScriptedTurn } from "./mockResponsesModel.ts"
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
 * The demo's scripted Responses-API model, for the real `codex app-server` and `codex-acp`. It
 * keeps no state: the scenario comes from the turn's user message and the step from how many
 * tool results followed it, so every request is answered from what the request itself says
 * (a restarted server, or two sessions at once, play the same script).
 */

export interface CodexDemoOptions {
  /** Whether the program turns `request_user_input` into questions (codex-acp 0.16.0 does not). */
  readonly questions: boolean
  /**
   * Whether the program reads a `<proposed_plan>` block as the proposed plan (the app-server in
   * plan mode). codex-acp 0.16.0 has no plan mode and would show the tags as text: it gets the
   * plan as plain Markdown.
   */
  readonly planTags: boolean
}

const text = (value: string): ScriptedOutput => ({ type: "text", text: value, chunkSize: 9 })
const call = (name: string, args: unknown): ScriptedOutput => ({ type: "function_call", name, arguments: args })

/**
 * Codex's own `request_user_input`: 0.171.0 wants options on every question and offers free text
 * on each ("None of the above" plus a note); its tool has no multi-select and no secret flag.
 */
const askQuestions = call("request_user_input", {
  questions: [
    {
      id: "language",
      header: "Language",
      question: "Which language should the service be written in?",
      options: [
        { label: "TypeScript (Recommended)", description: "Node 20, typed." },
        { label: "Go", description: "One static binary." }
      ]
    },
    {
      id: "service_name",
      header: "Name",
      question: "What should the service be called? (type your own name if you like)",
      options: [
        { label: "greeter (Recommended)", description: "Short and plain." },
        { label: "hello-service", description: "Says what it does." }
      ]
    }
  ]
})

const proposedPlan = (options: CodexDemoOptions) =>
  text(
    options.planTags
      ? `Thanks, here is my plan.\n\n<proposed_plan>\n${DEMO_PLAN_MARKDOWN}</proposed_plan>\n`
      : `Thanks, here is my plan.\n\n${DEMO_PLAN_MARKDOWN}`
  )

const updatePlan = (n: number) =>
  call("update_plan", {
    explanation: `Demo checklist, update ${n + 1} of ${DEMO_CHECKLIST_UPDATES}`,
    plan: DEMO_CHECKLIST_STEPS.map((step, i) => ({ step, status: checklistAt(n)[i] }))
  })

const runCommand = call("exec_command", {
  cmd: DEMO_COMMAND,
  // Asks for approval even under a permissive sandbox: the scenario is about the approval.
  sandbox_permissions: "require_escalated",
  justification: "Write planbridge-demo.txt (the demo's command)",
  tty: false,
  // Not a login shell: the user's profile (slow, interactive, or waiting on a lock) must not
  // decide how long the demo's one-line command takes.
  login: false
})

/** The model turns of each scenario, in order; a step past the end repeats the closing text. */
const scriptOf = (scenario: DemoScenario, options: CodexDemoOptions): ReadonlyArray<ScriptedTurn> => {
  switch (scenario) {
    case "questions":
      return options.questions
        ? [{ output: [text("A few questions first."), askQuestions] }, { output: [proposedPlan(options)] }]
        : [
            {
              output: [
                text("This agent cannot ask structured questions; here is a plan instead.\n\n"),
                proposedPlan(options)
              ]
            }
          ]
    case "implement":
      return [{ output: [text(IMPLEMENT_TEXT)] }]
    case "plan":
      return [{ output: [proposedPlan(options)] }]
    case "checklist":
      return [
        ...Array.from({ length: DEMO_CHECKLIST_UPDATES }, (_, n) => ({ output: [updatePlan(n)] })),
        { output: [text("All three steps are done.")] }
      ]
    case "command":
      return [{ output: [runCommand] }, { output: [text("The command ran: see planbridge-demo.txt.")] }]
    case "help":
      return [{ output: [text(HELP_TEXT)] }]
  }
}

const isUserMessage = (item: ResponsesInputItem) => item.type === "message" && item.role === "user"

/** The user's text: the message's last non-empty text part (context a program adds comes before it). */
const textOf = (item: ResponsesInputItem | undefined): string => {
  const content = item?.content
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  const texts = content.flatMap((part: unknown) =>
    typeof part === "object" && part !== null && "text" in part && typeof part.text === "string" && part.text !== ""
      ? [part.text]
      : []
  )
  return texts.at(-1) ?? ""
}

/** What `update_plan` answers when it took the checklist. */
const PLAN_UPDATED = "Plan updated"

export const codexDemoTurn =
  (options: CodexDemoOptions) =>
  (request: LoggedRequest): ScriptedTurn => {
    const input = request.body.input ?? []
    const last = input.findLastIndex(isUserMessage)
    const outputs = input.slice(last + 1).filter((item) => item.type === "function_call_output")
    const scenario = scenarioOf(textOf(input[last]))
    // In plan mode Codex refuses `update_plan` (a checklist is for doing the work): say so
    // instead of playing on to an empty turn.
    const refused = outputs.at(-1)?.output
    if (scenario === "checklist" && typeof refused === "string" && refused !== PLAN_UPDATED)
      return {
        output: [
          text(
            `The program refused the checklist tool ("${refused}"). The checklist scenario needs ` +
              "default mode: turn plan mode off and send the message again."
          )
        ]
      }
    const script = scriptOf(scenario, options)
    const step = outputs.length
    return step < script.length ? script[step]! : { output: [text("Done.")] }
  }
