import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Io } from "./CliIo.ts"
import { CliExit, ExitCode, ExitCodes, USAGE_ERROR } from "./exitCodes.ts"
import { acp } from "./acpCommand.ts"
import { serve } from "./serveCommand.ts"
import { acpAgents, credentials, dataDir, json, optionalText, serverUrl, store, withShownDefault } from "./flags.ts"
import { lazily } from "./lazily.ts"
import { notifications } from "./notificationsCommands.ts"
import { prompts } from "./promptsCommands.ts"
import { threads } from "./threadsCommands.ts"
import { RUN_CONFIG } from "./runConfig.ts"

/**
 * The `planbridge` command table: every command, its flags, defaults, examples and exit codes.
 * Definitions only: each command's module (fastify, drizzle, the provider SDKs, …) is imported
 * by its handler when that command runs (`lazily`), so `planbridge token` or `--help` loads none
 * of them. `serve` is defined in serveCommand.ts, `acp` in acpCommand.ts, the `prompts` family in
 * promptsCommands.ts.
 */

// ---- open -----------------------------------------------------------------------------------

const open = Command.make(
  "open",
  {
    url: serverUrl,
    dataDir
  },
  lazily(
    () => import("./open.ts"),
    (m, input) => m.open({ ...input, url: Option.getOrUndefined(input.url) })
  )
).pipe(
  Command.withDescription(
    "Open the web UI signed in: the token travels in the URL's fragment (#token=…), which browsers never send " +
      "to a server. Uses xdg-open or open when one is on PATH; otherwise prints the address."
  ),
  Command.withShortDescription("open the web UI in a browser, signed in (prints the address without one)"),
  Command.withExamples([{ command: "planbridge open", description: "the server running on ./.planbridge/" }]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "opened, or printed"],
    [
      ExitCode.failed,
      "no token in the data dir and none in PLANBRIDGE_TOKEN, or no server running on it (without --url)"
    ],
    USAGE_ERROR
  ])
)

// ---- providers ------------------------------------------------------------------------------

const providers = Command.make(
  "providers",
  { credentials, acpAgents, json, dataDir },
  lazily(
    () => import("./providers.ts"),
    (m, input) => m.providers({ ...input, credentials: Option.getOrUndefined(input.credentials) })
  )
).pipe(
  Command.withDescription(
    "List the providers `serve` would offer with the same environment, each asked whether it is logged in " +
      "(a short-lived run of the real program: no hooks, no MCP servers), ready or not, with a hint when not."
  ),
  Command.withShortDescription("list the providers and whether each is logged in (--json for JSON)"),
  Command.withExamples([
    { command: "planbridge providers", description: "which of your logins Planbridge can use" },
    { command: "planbridge providers --json", description: "the same as `GET /api/providers`, without a server" }
  ]),
  Command.annotate(ExitCodes, [[ExitCode.ok, "listed"], USAGE_ERROR])
)

// ---- token ----------------------------------------------------------------------------------

const token = Command.make(
  "token",
  { dataDir },
  lazily(
    () => import("./token.ts"),
    (m, input) => m.token(input)
  )
).pipe(
  Command.withDescription(
    "Print the access token stored (mode 0600) in the data dir, where `serve` creates it on its first start. " +
      "It never creates one: a data dir without a token, or whose running server was given its own, is refused."
  ),
  Command.withShortDescription("print the access token the server on the data dir stored"),
  Command.withExamples([
    { command: 'curl -H "Authorization: Bearer $(planbridge token)" http://127.0.0.1:4317/api/prompts' }
  ]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "printed"],
    [ExitCode.failed, "no token in the data dir, or its running server uses one given by --token"],
    USAGE_ERROR
  ])
)

// ---- replay, rebuild, schema -------------------------------------------------------------------

const replay = Command.make(
  "replay",
  {
    file: Argument.String("FILE").pipe(Argument.withDescription("a recorded transcript (.jsonl), line 1 its provider")),
    threadId: optionalText("thread-id", "the thread id of the events (default: replay-<file name>)"),
    dataDir: optionalText("data-dir", "persist the events in this data dir, by the ingestion (default: only print)"),
    store
  },
  lazily(
    () => import("./replay.ts"),
    (m, input) =>
      m.replay({
        file: input.file,
        threadId: Option.getOrUndefined(input.threadId),
        dataDir: Option.getOrUndefined(input.dataDir),
        store: Option.getOrUndefined(input.store)
      })
  )
).pipe(
  Command.withDescription("Replay a recorded transcript through its provider's mapping; print the canonical events."),
  Command.withShortDescription("replay a recorded transcript: print its canonical events (--data-dir to persist)"),
  Command.withExamples([
    { command: "planbridge replay fixtures/codex/default-update-plan.jsonl" },
    { command: "planbridge replay fixtures/codex/default-update-plan.jsonl --data-dir /tmp/pb", description: "persist" }
  ]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "replayed"],
    [ExitCode.failed, "unreadable file, not a transcript, no replayer for it, or the store failed"],
    USAGE_ERROR
  ])
)

const record = Command.make(
  "record",
  {
    threadId: Argument.String("THREAD").pipe(
      Argument.withDescription("the thread to record, as threads.list names it")
    ),
    out: optionalText("out", "write the transcript to this file (default: print it)"),
    dataDir,
    store
  },
  lazily(
    () => import("./record.ts"),
    (m, input) =>
      m.record({
        threadId: input.threadId,
        out: Option.getOrUndefined(input.out),
        dataDir: input.dataDir,
        store: Option.getOrUndefined(input.store)
      })
  )
).pipe(
  Command.withDescription(
    "Write a thread of the event log (a session against a real provider, say) as a transcript in the fixtures' " +
      "format, for `serve --replay` and `replay`: its canonical events without their native payloads (`raw`); " +
      "secret answers are redacted in the log already."
  ),
  Command.withShortDescription("write a thread of the event log as a replayable transcript (--out FILE)"),
  Command.withExamples([
    {
      command: "planbridge record 5f0c… --out recordings/my-session.jsonl",
      description: "then serve --replay recordings"
    }
  ]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "written"],
    [ExitCode.failed, "no such thread, too many events, or the store failed"],
    USAGE_ERROR
  ])
)

const rebuild = Command.make(
  "rebuild",
  { dryRun: Flag.Boolean("dry-run").pipe(withShownDefault(false, "only compare; change nothing")), dataDir, store },
  lazily(
    () => import("./rebuild.ts"),
    (m, input) => m.rebuild({ ...input, store: Option.getOrUndefined(input.store) })
  )
).pipe(
  Command.withDescription(
    "Drop the projections and replay the event log into them; refused while the data dir's server runs (--dry-run is not)."
  ),
  Command.withShortDescription("drop the projections and replay the event log (--dry-run to only compare)"),
  Command.withExamples([{ command: "planbridge rebuild --dry-run", description: "does the log give the same rows?" }]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "the rebuilt projections are identical"],
    [ExitCode.failed, "the store could not be opened or read, or (without --dry-run) the data dir's server runs"],
    USAGE_ERROR,
    [ExitCode.changed, "they differed (and, without --dry-run, were repaired)"]
  ])
)

const schema = Command.make(
  "schema",
  { out: optionalText("out", "write the document to this file (default: print it)") },
  lazily(
    () => import("./schema.ts"),
    (m, input) => m.schema({ out: Option.getOrUndefined(input.out) })
  )
).pipe(
  Command.withDescription("Print the protocol's JSON Schema (draft 2020-12): ClientFrame, ServerFrame, RuntimeEvent."),
  Command.withShortDescription("print the protocol's JSON Schema for code generators (--out FILE to write it)"),
  Command.withExamples([{ command: "planbridge schema --out planbridge.schema.json" }]),
  Command.annotate(ExitCodes, [[ExitCode.ok, "printed or written"], USAGE_ERROR])
)

// ---- help and the root ---------------------------------------------------------------------------

/**
 * `planbridge help [COMMAND…]`: the same text as `planbridge COMMAND… --help`. The path is
 * checked first, because the library's `--help` wins over an unknown name (and would show the
 * parent's help); an unknown name is reported by running the table up to it, which names the
 * closest command and runs nothing, since only leaf commands have handlers.
 */
const help = Command.make(
  "help",
  {
    command: Argument.String("COMMAND").pipe(
      Argument.withDescription("a command and its sub-command, e.g. `prompts answer`"),
      Argument.variadic()
    )
  },
  ({ command }): Effect.Effect<void, CliExit, Command.Environment> =>
    Effect.suspend(() => {
      const run = (argv: ReadonlyArray<string>) => Command.runWith(planbridge, RUN_CONFIG)(argv)
      let current: Command.Command.Any = planbridge
      for (const [index, name] of command.entries()) {
        const children = current.subcommands.flatMap((group) => group.commands)
        const next = children.find((c) => c.name === name || c.alias === name)
        if (next !== undefined) {
          current = next
          continue
        }
        if (children.length > 0) return run(command.slice(0, index + 1))
        const parent = command.slice(0, index).join(" ")
        return Effect.gen(function* () {
          const io = yield* Io
          io.err(`planbridge help: '${parent}' has no sub-command '${name}'\n`)
          return yield* new CliExit({ code: ExitCode.usage })
        })
      }
      return run([...command, "--help"])
    }).pipe(Effect.mapError((error) => (error instanceof CliExit ? error : new CliExit({ code: ExitCode.usage }))))
).pipe(
  Command.withDescription("Show the help of a command or sub-command: usage, options, defaults, examples, exit codes."),
  Command.withShortDescription("show the help of a command (same as COMMAND --help)"),
  Command.withExamples([{ command: "planbridge help prompts answer" }]),
  Command.annotate(ExitCodes, [[ExitCode.ok, "shown"], USAGE_ERROR])
)

export const planbridge = Command.make("planbridge").pipe(
  Command.withDescription(
    "Provider-agnostic orchestration backend for coding agents. Every command that touches state takes --data-dir DIR."
  ),
  Command.withSubcommands([
    serve,
    acp,
    providers,
    open,
    token,
    prompts,
    notifications,
    threads,
    replay,
    record,
    rebuild,
    schema,
    help
  ]),
  Command.withExamples([
    { command: "planbridge serve", description: "run the server on 127.0.0.1:4317" },
    { command: "planbridge prompts list --status pending", description: "what is waiting for an answer" },
    { command: "planbridge help prompts answer", description: "the help of one command" },
    { command: "planbridge --completions bash > /etc/bash_completion.d/planbridge", description: "shell completion" }
  ]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "success"],
    [ExitCode.failed, "the command failed (its message on stderr)"],
    USAGE_ERROR,
    [ExitCode.changed, "rebuild: the projections differed"]
  ])
)

/**
 * `argv` without its `--help`/`-h` when its leading names reach a name that is no command:
 * the library's `--help` wins over an unknown name and would show the parent's help with exit
 * 0, as if the command existed; without it the library reports the unknown name (the closest
 * command named) as the usage error it is. The walk stops at the first flag, whose value the
 * library alone knows how to read.
 */
const withoutHelpForUnknown = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  let current: Command.Command.Any = planbridge
  for (const name of argv) {
    if (name.startsWith("-")) return argv
    const children = current.subcommands.flatMap((group) => group.commands)
    if (children.length === 0) return argv
    const next = children.find((c) => c.name === name || c.alias === name)
    if (next === undefined) return argv.filter((arg) => arg !== "--help" && arg !== "-h")
    current = next
  }
  return argv
}

/** Runs the table on `argv`; help, usage errors and completion scripts are written through the presenter. */
export const runPlanbridge = (argv: ReadonlyArray<string>) =>
  Command.runWith(planbridge, RUN_CONFIG)(withoutHelpForUnknown(argv))
