/**
 * Demo mode's scenarios, chosen from the text of the user's message by keyword (the first rule
 * that matches wins, case-insensitive). The same message always plays the same scenario, so a
 * frontend's tests get the same events every run. Documented in README.md and PROTOCOL.md.
 */
export type DemoScenario = "questions" | "checklist" | "implement" | "plan" | "command" | "help"

export const DEMO_KEYWORDS: ReadonlyArray<{ readonly scenario: DemoScenario; readonly words: ReadonlyArray<string> }> =
  [
    { scenario: "questions", words: ["question", "ask"] },
    { scenario: "checklist", words: ["checklist", "todo"] },
    // Before "plan": "Implement the plan." (the web UI's button) carries the plan on, it does not ask for one.
    { scenario: "implement", words: ["implement"] },
    { scenario: "plan", words: ["plan"] },
    { scenario: "command", words: ["command", "approval", "run"] }
  ]

export const scenarioOf = (text: string): DemoScenario => {
  const lower = text.toLowerCase()
  return DEMO_KEYWORDS.find((rule) => rule.words.some((word) => lower.includes(word)))?.scenario ?? "help"
}

/** What any other message gets back: the list of scenarios, so a newcomer knows what to type. */
export const HELP_TEXT =
  "This is Planbridge's demo model: the agent program is real, its model is scripted. Try a message with " +
  '"question" (a plan turn with questions; use plan mode), "checklist" (a checklist that updates), ' +
  '"plan" (a proposed plan to approve or edit; use plan mode) or "command" (a command to approve).'

/** What the `implement` scenario says: the plan is carried on, not proposed again. */
export const IMPLEMENT_TEXT = "Implementing the plan: I would start with greet.js, then serve it and test greet."

/** The command the `command` scenario asks to run: harmless, and its effect is visible in the cwd. */
export const DEMO_COMMAND = "printf 'hello from the Planbridge demo\\n' > planbridge-demo.txt"
export const DEMO_COMMAND_FILE = "planbridge-demo.txt"

export const DEMO_PLAN_MARKDOWN =
  "# Plan: a small greeting service\n\n" +
  "1. Create `greet.js` with a `greet(name)` function.\n" +
  "2. Serve it over HTTP on port 8080.\n" +
  "3. Add a unit test for `greet`.\n"

/** The checklist the `checklist` scenario walks through, one status change per model turn. */
export const DEMO_CHECKLIST_STEPS = ["Read the code", "Write the change", "Run the tests"] as const
export type DemoStepStatus = "pending" | "in_progress" | "completed"

/** How many checklist updates the `checklist` scenario makes before its closing text. */
export const DEMO_CHECKLIST_UPDATES = 3

/** The statuses after update `n` (0-based): step n in progress, those before it done; the last update ends all. */
export const checklistAt = (n: number): ReadonlyArray<DemoStepStatus> =>
  DEMO_CHECKLIST_STEPS.map((_, i) =>
    n >= DEMO_CHECKLIST_UPDATES - 1 || i < n ? "completed" : i === n ? "in_progress" : "pending"
  )
