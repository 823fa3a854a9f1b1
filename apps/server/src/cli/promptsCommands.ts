import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { IsoDateTime } from "@planbridge/contracts"
import { ExitCode, ExitCodes, USAGE_ERROR } from "./exitCodes.ts"
import { dataDir, json, optionalText, serverUrl, withShownDefault } from "./flags.ts"
import { lazily } from "./lazily.ts"
import type { PromptsTarget } from "./prompts.ts"

/**
 * `planbridge prompts list|show|answer|cancel|approvals|respond|decide`: the definitions of the
 * prompt commands, which talk to a running server. Their modules (prompts.ts, approvals.ts) are
 * imported only when one of them runs.
 */

/** The flags every `prompts` action shares; accepted before or after the action's name. */
const promptsParent = Command.make("prompts").pipe(
  Command.withSharedFlags({
    url: serverUrl,
    dataDir,
    json
  })
)

const PROMPTS_EXIT_CODES = [
  [ExitCode.ok, "done"],
  [ExitCode.failed, "the server refused (its error code and message on stderr), or no server answered"],
  USAGE_ERROR
] as const

/**
 * An action of the family with the shared flags; its module (`load`) is imported only when it
 * runs.
 */
const actionOf =
  <M>(load: () => Promise<M>) =>
  <I>(action: string, run: (m: M, target: PromptsTarget, input: I) => Effect.Effect<number>) =>
  (input: I) =>
    Effect.flatMap(promptsParent, (shared) =>
      lazily(load, (m, i: I) => {
        const { url, dataDir, json } = shared
        const target = { command: `planbridge prompts ${action}`, url: Option.getOrUndefined(url), dataDir, json }
        return run(m, target, i)
      })(input)
    )

const promptsAction = actionOf(() => import("./prompts.ts"))
const approvalsAction = actionOf(() => import("./approvals.ts"))

const promptId = Argument.String("PROMPT_ID").pipe(Argument.withDescription("the prompt's id, as `prompts list` shows"))
const some = <K extends string, A>(key: K, value: Option.Option<A>) =>
  Option.match(value, { onNone: () => ({}), onSome: (v) => ({ [key]: v }) as { [P in K]: A } })

const list = Command.make(
  "list",
  {
    status: Flag.Literals("status", ["pending", "resolved"]).pipe(
      Flag.withDescription("only prompts in this state"),
      Flag.optional
    ),
    provider: optionalText("provider", "only this provider's prompts (codex, claude, cursor, …)"),
    thread: optionalText("thread", "only this thread's prompts")
  },
  promptsAction("list", (m, target, input) =>
    m.list(target, {
      ...some("status", input.status),
      ...some("provider", input.provider),
      ...some("thread", input.thread)
    })
  )
).pipe(
  Command.withDescription("List prompts, newest first, with their age and first question, fit to the terminal."),
  Command.withShortDescription("list prompts, newest first"),
  Command.withExamples([
    { command: "planbridge prompts list --status pending", description: "what is waiting for an answer" },
    { command: "planbridge prompts list --provider claude --json", description: "as JSON, for scripts" }
  ]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)

const show = Command.make(
  "show",
  { promptId },
  promptsAction("show", (m, target, input) => m.show(target, input.promptId))
).pipe(
  Command.withDescription(
    "Show one prompt as a card: thread, turn, age, each question with its options and the chosen answer " +
      "(secrets as hidden), the resolution and the timeline. --json prints the API's body, raw payload included."
  ),
  Command.withShortDescription("show one prompt: questions, answer, resolution, timeline"),
  Command.withExamples([{ command: "planbridge prompts show 5b0e2c44:prompt:01a22a8b:call_Qm3v" }]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)

const clientRequestId = optionalText(
  "client-request-id",
  "makes a retry idempotent: the same id gets the first outcome again (default: a new one)"
)

const Pair = (what: string) =>
  Schema.String.check(Schema.isPattern(/^[^=]+=/, { message: `expected QUESTION=${what}, e.g. db_choice=opt-1` }))

const answer = Command.make(
  "answer",
  {
    promptId,
    options: Flag.String("option").pipe(
      Flag.withSchema(Pair("OPTION")),
      Flag.withDescription("QUESTION=OPTION: select an option; repeat it for several options or questions"),
      Flag.atLeast(0)
    ),
    texts: Flag.String("text").pipe(
      Flag.withSchema(Pair("TEXT")),
      Flag.withDescription("QUESTION=TEXT: a free-form answer, or a note next to the selected option; repeatable"),
      Flag.atLeast(0)
    ),
    skip: Flag.Boolean("skip").pipe(
      withShownDefault(false, "skip the prompt: resolve it without an answer (`empty`); not with --option or --text")
    ),
    clientRequestId
  },
  promptsAction("answer", (m, target, input) =>
    m.answer(target, { ...input, clientRequestId: Option.getOrUndefined(input.clientRequestId) })
  )
).pipe(
  Command.withDescription(
    "Answer a prompt through the running server, which routes it to the session that asked: at least one " +
      "--option or --text, or --skip to resolve it without an answer."
  ),
  Command.withShortDescription("answer a prompt"),
  Command.withExamples([
    {
      command:
        "planbridge prompts answer PROMPT_ID --option db_choice=opt-1 --option test_scope=opt-0 " +
        '--text test_scope="plus fuzzing"',
      description: "one option for each question, and a note"
    },
    { command: "planbridge prompts answer PROMPT_ID --skip", description: "skip it: resolved without an answer" }
  ]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)

const cancel = Command.make(
  "cancel",
  { promptId },
  promptsAction("cancel", (m, target, input) => m.cancel(target, input.promptId))
).pipe(
  Command.withDescription("Cancel a prompt: it is resolved `cancelled` and the provider is told so."),
  Command.withShortDescription("cancel a prompt"),
  Command.withExamples([{ command: "planbridge prompts cancel PROMPT_ID" }]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)

const approvals = Command.make(
  "approvals",
  { thread: optionalText("thread", "only this thread's") },
  approvalsAction("approvals", (m, target, input) => m.approvals(target, Option.getOrUndefined(input.thread)))
).pipe(
  Command.withDescription(
    "List the approvals and plan decisions waiting for a person, newest first: what each asks (the command, " +
      "the plan), its options for `respond`, and for a plan what `decide` takes."
  ),
  Command.withShortDescription("list pending approvals and plan decisions"),
  Command.withExamples([{ command: "planbridge prompts approvals --json" }]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)

const respond = Command.make(
  "respond",
  {
    requestId: Argument.String("REQUEST_ID").pipe(Argument.withDescription("the request's id, as `approvals` shows")),
    option: Flag.String("option").pipe(Flag.withDescription("the option to choose, as `approvals` lists it")),
    clientRequestId
  },
  approvalsAction("respond", (m, target, input) =>
    m.respond(target, { ...input, clientRequestId: Option.getOrUndefined(input.clientRequestId) })
  )
).pipe(
  Command.withDescription("Answer an approval (or a plan approval) with one of the provider's own options."),
  Command.withShortDescription("answer an approval with one of its options"),
  Command.withExamples([{ command: "planbridge prompts respond REQUEST_ID --option allow" }]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)

const decide = Command.make(
  "decide",
  {
    planId: Argument.String("PLAN_ID").pipe(Argument.withDescription("the plan's id, as `approvals` shows")),
    thread: Flag.String("thread").pipe(Flag.withDescription("the plan's thread, as `approvals` shows")),
    decision: Flag.Literals("decision", ["approved", "rejected", "edited"]).pipe(
      Flag.withDescription("approved, rejected, or edited (with --plan-file, where the plan takes edits)")
    ),
    feedback: optionalText("feedback", "with rejected: why, for the model (where the plan takes feedback)"),
    planFile: optionalText("plan-file", "with edited: a file holding the plan as approved"),
    clientRequestId
  },
  approvalsAction("decide", (m, target, input) =>
    m.decide(target, {
      planId: input.planId,
      thread: input.thread,
      decision: input.decision,
      feedback: Option.getOrUndefined(input.feedback),
      planFile: Option.getOrUndefined(input.planFile),
      clientRequestId: Option.getOrUndefined(input.clientRequestId)
    })
  )
).pipe(
  Command.withDescription(
    "Decide a proposed plan: approve it, reject it (with feedback where the provider takes it) or approve " +
      "an edited one (where it takes edits: the capabilities `supportsPlanFeedback`, `supportsPlanEdits`)."
  ),
  Command.withShortDescription("approve, reject or edit a proposed plan"),
  Command.withExamples([
    {
      command: 'planbridge prompts decide PLAN_ID --thread THREAD_ID --decision rejected --feedback "smaller steps"',
      description: "reject it, saying why"
    }
  ]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)

const audit = Command.make(
  "audit",
  {
    since: Flag.String("since").pipe(
      Flag.withSchema(IsoDateTime),
      Flag.withDescription("only resolutions at or after this ISO-8601 UTC time, e.g. 2026-12-01T00:00:00.000Z"),
      Flag.optional
    )
  },
  promptsAction("audit", (m, target, input) => m.audit(target, { since: Option.getOrUndefined(input.since) }))
).pipe(
  Command.withDescription(
    "Export the append-only trail of resolutions, in log order: each prompt, request and plan decision that " +
      "ended, how, and who or what ended it (actor, via, client, replica). Answers are never in it."
  ),
  Command.withShortDescription("who resolved what, in order (--json to export)"),
  Command.withExamples([
    { command: "planbridge prompts audit --json", description: "the whole trail, as JSON" },
    { command: "planbridge prompts audit --since 2026-12-01T00:00:00Z" }
  ]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)

export const prompts = promptsParent.pipe(
  Command.withDescription(
    "List, show, answer or cancel prompts, list and answer approvals and plan decisions, or export who " +
      "resolved them, through the running server (--json for JSON)."
  ),
  Command.withShortDescription("questions, approvals, plan decisions and their audit through the running server"),
  Command.withSubcommands([list, show, answer, cancel, approvals, respond, decide, audit]),
  Command.withExamples([
    { command: "planbridge prompts list --status pending" },
    { command: "planbridge prompts show PROMPT_ID" }
  ]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)
