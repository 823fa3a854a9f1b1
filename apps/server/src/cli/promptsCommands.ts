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
 * `planbridge prompts list|show|answer|cancel`: the definitions of the prompt commands, which
 * talk to a running server. Their module (prompts.ts) is imported only when one of them runs.
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

type PromptsModule = typeof import("./prompts.ts")

/** Runs a `prompts` action with the shared flags; the action's module is loaded only then. */
const promptsAction =
  <I>(action: string, run: (m: PromptsModule, target: PromptsTarget, input: I) => Effect.Effect<number>) =>
  (input: I) =>
    Effect.flatMap(promptsParent, (shared) =>
      lazily(
        () => import("./prompts.ts"),
        (m, i: I) => {
          const { url, dataDir, json } = shared
          const target = { command: `planbridge prompts ${action}`, url: Option.getOrUndefined(url), dataDir, json }
          return run(m, target, i)
        }
      )(input)
    )

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
  Command.withExamples([{ command: "planbridge prompts show codex-prompt:01a22a8b:call_Qm3v" }]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
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
    clientRequestId: optionalText(
      "client-request-id",
      "makes a retry idempotent: the same id gets the first outcome again (default: a new one)"
    )
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
    "List, show, answer or cancel prompts through the running server, or export who resolved them (--json for JSON)."
  ),
  Command.withShortDescription("list, show, answer, cancel or audit prompts through the running server"),
  Command.withSubcommands([list, show, answer, cancel, audit]),
  Command.withExamples([
    { command: "planbridge prompts list --status pending" },
    { command: "planbridge prompts show PROMPT_ID" }
  ]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
)
