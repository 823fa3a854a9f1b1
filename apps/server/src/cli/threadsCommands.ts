import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ExitCode, ExitCodes, USAGE_ERROR } from "./exitCodes.ts"
import { dataDir, json, optionalText, serverUrl, withShownDefault } from "./flags.ts"
import { lazily } from "./lazily.ts"

/**
 * `planbridge threads import`: an agent's own sessions (ACP `session/list`) and a new thread
 * that takes one up, on the running server. Its module (threadsImport.ts) is imported only when
 * it runs.
 */
const threadsParent = Command.make("threads").pipe(Command.withSharedFlags({ url: serverUrl, dataDir, json }))

const EXIT_CODES = [
  [ExitCode.ok, "done"],
  [ExitCode.failed, "the server refused (its error code and message on stderr), or no server answered"],
  USAGE_ERROR
] as const

const importCommand = Command.make(
  "import",
  {
    provider: Flag.String("provider").pipe(
      Flag.withDescription("the ACP provider, as `planbridge providers` lists it")
    ),
    list: Flag.Boolean("list").pipe(withShownDefault(false, "list the agent's own sessions instead of importing one")),
    cwd: optionalText("cwd", "with --list: only the sessions of this working directory (absolute)"),
    mode: optionalText("mode", "the imported thread's operating mode (default: default)"),
    sessionId: Argument.String("SESSION_ID").pipe(
      Argument.withDescription("the agent's session id, as `threads import --list` shows"),
      Argument.optional
    )
  },
  (input) =>
    Effect.flatMap(threadsParent, (shared) =>
      lazily(
        () => import("./threadsImport.ts"),
        (m, i: typeof input) =>
          m.threadsImport(
            {
              command: "planbridge threads import",
              url: Option.getOrUndefined(shared.url),
              dataDir: shared.dataDir,
              json: shared.json
            },
            {
              provider: i.provider,
              list: i.list,
              cwd: Option.getOrUndefined(i.cwd),
              mode: Option.getOrUndefined(i.mode),
              sessionId: Option.getOrUndefined(i.sessionId)
            }
          )
      )(input)
    )
).pipe(
  Command.withDescription(
    "List an ACP agent's own sessions (its session/list; refused `unsupported` when the agent does not offer it), " +
      "or bring one in as a new thread whose session takes it up: session/resume where the agent offers it (no " +
      "history replayed), else session/load (history replayed by the agent). The next turn reaches the model " +
      "with the earlier conversation."
  ),
  Command.withShortDescription("list an agent's sessions, or import one as a thread"),
  Command.withExamples([
    { command: "planbridge threads import --provider acp-claude --list", description: "the agent's sessions" },
    { command: "planbridge threads import --provider acp-claude 4f1c…", description: "a new thread on one of them" }
  ]),
  Command.annotate(ExitCodes, [...EXIT_CODES])
)

export const threads = threadsParent.pipe(
  Command.withDescription("Threads on the running server: import an ACP agent's existing session (--json for JSON)."),
  Command.withShortDescription("import an agent's existing session as a thread"),
  Command.withSubcommands([importCommand]),
  Command.withExamples([{ command: "planbridge threads import --provider acp-claude --list" }]),
  Command.annotate(ExitCodes, [...EXIT_CODES])
)
