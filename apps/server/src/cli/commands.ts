import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Io } from "./CliIo.ts"
import { CliExit, ExitCode, ExitCodes, exitWith } from "./exitCodes.ts"
import { dataDir, DEFAULT_PORT, json, store, withShownDefault } from "./flags.ts"
import type { PromptsTarget } from "./prompts.ts"

/**
 * The `planbridge` command table: every command, its flags, defaults, examples and exit codes.
 * Definitions only: each command's module (fastify, drizzle, the provider SDKs, …) is imported
 * by its handler when that command runs, so `planbridge token` or `--help` loads none of them.
 */

/** Imports a command's module, then runs it; the number it ends with is the exit code. */
const lazily =
  <M, I>(load: () => Promise<M>, run: (module: M, input: I) => Effect.Effect<number>) =>
  (input: I): Effect.Effect<void, CliExit> =>
    Effect.promise(load).pipe(
      Effect.flatMap((module) => run(module, input)),
      Effect.flatMap(exitWith)
    )

const USAGE_ERROR = [ExitCode.usage, "usage error: unknown command or option, bad value, missing argument"] as const
const optionalText = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withDescription(description), Flag.optional)
const repeatable = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withDescription(`${description}; repeatable`), Flag.atLeast(0))

// ---- serve ----------------------------------------------------------------------------------

const Port = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }))

const credentials = Flag.Literals("credentials", ["user", "isolated"]).pipe(
  Flag.withDescription(
    "whose logins providers run with: user (your own Codex/Claude logins and settings; the default on loopback) " +
      "or isolated (scratch homes, OPENAI_API_KEY/ANTHROPIC_API_KEY; implied by a PLANBRIDGE_*_BASE_URL); " +
      "default: PLANBRIDGE_CREDENTIALS"
  ),
  Flag.optional
)

const acpAgents = repeatable(
  "acp-agent",
  "NAME=COMMAND: offer an ACP agent as provider NAME, e.g. claude-acp=claude-agent-acp (also <data dir>/acp-agents.json)"
)

const serve = Command.make(
  "serve",
  {
    credentials,
    acpAgents,
    host: Flag.String("host").pipe(withShownDefault("127.0.0.1", "the address to bind; not loopback needs a token")),
    port: Flag.Int("port").pipe(Flag.withSchema(Port), withShownDefault(DEFAULT_PORT, "the TCP port; 0 picks one")),
    token: optionalText("token", "the access token (default: PLANBRIDGE_TOKEN, else the one stored in the data dir)"),
    allowOrigins: repeatable("allow-origin", "a browser Origin allowed besides loopback's, e.g. https://app.example"),
    allowHosts: repeatable("allow-host", "a Host name served besides localhost and the bound host (DNS rebinding)"),
    logLevel: Flag.Literals("log-level", ["silent", "error", "warn", "info", "debug"]).pipe(
      withShownDefault("info", "the server's log level (JSON lines on stdout)")
    ),
    demo: Flag.Boolean("demo").pipe(
      withShownDefault(
        false,
        "demo mode: the real provider programs against a scripted model Planbridge serves on 127.0.0.1; no login"
      )
    ),
    dataDir,
    store
  },
  lazily(
    () => import("./serve.ts"),
    (m, input) =>
      m.serve({
        ...input,
        token: Option.getOrUndefined(input.token),
        credentials: Option.getOrUndefined(input.credentials),
        store: Option.getOrUndefined(input.store)
      })
  )
).pipe(
  Command.withDescription(
    "Run the server (WebSocket on /ws, operator API on /api) until SIGINT or SIGTERM. With --credentials user " +
      "(the default on loopback) it offers the installed Codex and Claude with your own logins and says which " +
      "are logged in; with isolated, those whose key is set (OPENAI_API_KEY, ANTHROPIC_API_KEY). Cursor needs " +
      "CURSOR_API_KEY or CURSOR_AUTH_TOKEN. Each provider is named at start-up: offered, or not and why."
  ),
  Command.withShortDescription("run the server (WebSocket on /ws, operator API on /api)"),
  Command.withExamples([
    { command: "planbridge serve", description: "on 127.0.0.1:4317 with the data in ./.planbridge/" },
    { command: "planbridge serve --demo", description: "try every feature without a login (scripted model)" },
    { command: "PLANBRIDGE_TOKEN=$(openssl rand -hex 32) planbridge serve --host 0.0.0.0", description: "everywhere" }
  ]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "stopped by SIGINT or SIGTERM"],
    [ExitCode.usage, "usage error, or a configuration the server refuses (a non-loopback host without a token)"]
  ])
)

// ---- open -----------------------------------------------------------------------------------

const open = Command.make(
  "open",
  {
    url: Flag.String("url").pipe(withShownDefault(`http://127.0.0.1:${DEFAULT_PORT}`, "the running server")),
    dataDir
  },
  lazily(
    () => import("./open.ts"),
    (m, input) => m.open(input)
  )
).pipe(
  Command.withDescription(
    "Open the web UI signed in: the token travels in the URL's fragment (#token=…), which browsers never send " +
      "to a server. Uses xdg-open or open when one is on PATH; otherwise prints the address."
  ),
  Command.withShortDescription("open the web UI in a browser, signed in (prints the address without one)"),
  Command.withExamples([{ command: "planbridge open", description: "the server on 127.0.0.1:4317" }]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "opened, or printed"],
    [ExitCode.failed, "no token in the data dir and none in PLANBRIDGE_TOKEN"],
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
  Command.withDescription("Print the access token; it is created on first use, stored with mode 0600 in the data dir."),
  Command.withShortDescription("print the access token (created on first use)"),
  Command.withExamples([
    { command: 'curl -H "Authorization: Bearer $(planbridge token)" http://127.0.0.1:4317/api/prompts' }
  ]),
  Command.annotate(ExitCodes, [[ExitCode.ok, "printed"], USAGE_ERROR])
)

// ---- prompts --------------------------------------------------------------------------------

/** The flags every `prompts` action shares; accepted before or after the action's name. */
const promptsParent = Command.make("prompts").pipe(
  Command.withSharedFlags({
    url: Flag.String("url").pipe(withShownDefault(`http://127.0.0.1:${DEFAULT_PORT}`, "the running server")),
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
          return run(m, { command: `planbridge prompts ${action}`, url, dataDir, json }, i)
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
    clientRequestId: optionalText(
      "client-request-id",
      "makes a retry idempotent: the same id gets the first outcome again (default: a new one)"
    )
  },
  promptsAction("answer", (m, target, input) =>
    m.answer(target, { ...input, clientRequestId: Option.getOrUndefined(input.clientRequestId) })
  )
).pipe(
  Command.withDescription("Answer a prompt through the running server, which routes it to the session that asked."),
  Command.withShortDescription("answer a prompt"),
  Command.withExamples([
    {
      command:
        "planbridge prompts answer PROMPT_ID --option db_choice=opt-1 --option test_scope=opt-0 " +
        '--text test_scope="plus fuzzing"',
      description: "one option for each question, and a note"
    }
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

const prompts = promptsParent.pipe(
  Command.withDescription("List, show, answer or cancel prompts through the running server (--json for JSON)."),
  Command.withShortDescription("list, show, answer or cancel prompts through the running server"),
  Command.withSubcommands([list, show, answer, cancel]),
  Command.withExamples([
    { command: "planbridge prompts list --status pending" },
    { command: "planbridge prompts show PROMPT_ID" }
  ]),
  Command.annotate(ExitCodes, PROMPTS_EXIT_CODES)
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

const rebuild = Command.make(
  "rebuild",
  { dryRun: Flag.Boolean("dry-run").pipe(withShownDefault(false, "only compare; change nothing")), dataDir, store },
  lazily(
    () => import("./rebuild.ts"),
    (m, input) => m.rebuild({ ...input, store: Option.getOrUndefined(input.store) })
  )
).pipe(
  Command.withDescription("Drop the projections and replay the event log into them; run it with the server stopped."),
  Command.withShortDescription("drop the projections and replay the event log (--dry-run to only compare)"),
  Command.withExamples([{ command: "planbridge rebuild --dry-run", description: "does the log give the same rows?" }]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "the rebuilt projections are identical"],
    [ExitCode.failed, "the store could not be opened or read"],
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

/** The library requires a version; it is shown only by `--version`, which is not offered (cliEnvironment.ts). */
const RUN_CONFIG = { version: "0.1.0" } as const

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
  Command.withSubcommands([serve, providers, open, token, prompts, replay, rebuild, schema, help]),
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

/** Runs the table on `argv`; help, usage errors and completion scripts are written through the presenter. */
export const runPlanbridge = Command.runWith(planbridge, RUN_CONFIG)
