import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ExitCode, ExitCodes } from "./exitCodes.ts"
import {
  acpAgents,
  credentials,
  dataDir,
  DEFAULT_PORT,
  optionalText,
  repeatable,
  store,
  withShownDefault
} from "./flags.ts"
import { lazily } from "./lazily.ts"
import { WaitPolicyText } from "./waitPolicyFlag.ts"

const Port = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }))

/** `--replay-speed`: the recorded pace divided by it (0: no waits); bounded so that a typo cannot stall a test. */
const ReplaySpeed = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1000 }))

/** `planbridge serve`: the server (its handler: serve.ts, loaded when it runs). */
export const serve = Command.make(
  "serve",
  {
    replay: optionalText(
      "replay",
      "DIR: offer each recorded transcript in DIR (*.jsonl, one sub-directory deep) as a provider that replays " +
        "it as a live session; no provider program runs, no login is needed"
    ),
    replayStrict: Flag.Boolean("replay-strict").pipe(
      withShownDefault(false, "with --replay: refuse an answer that differs from the recorded one (else: a warning)")
    ),
    replaySpeed: Flag.Finite("replay-speed").pipe(
      Flag.withSchema(ReplaySpeed),
      withShownDefault(
        1,
        "with --replay: the recorded pace times this (10: ten times faster, 0: no waits; at most 1000)"
      )
    ),
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
    waitPolicy: Flag.String("wait-policy").pipe(
      Flag.withSchema(WaitPolicyText),
      withShownDefault(
        "wait",
        "what the server does with a question nobody answers: wait, or after:<n>(ms|s|min|h):(empty|recommended|cancel)"
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
        store: Option.getOrUndefined(input.store),
        replay: Option.getOrUndefined(input.replay)
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
    { command: "planbridge serve --replay fixtures --port 0", description: "the recorded sessions, for a UI's tests" },
    { command: "PLANBRIDGE_TOKEN=$(openssl rand -hex 32) planbridge serve --host 0.0.0.0", description: "everywhere" }
  ]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "stopped by SIGINT or SIGTERM"],
    [ExitCode.usage, "usage error, or a configuration the server refuses (a non-loopback host without a token)"]
  ])
)
