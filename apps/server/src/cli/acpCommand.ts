import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Option from "effect/Option"
import { ExitCode, ExitCodes, USAGE_ERROR } from "./exitCodes.ts"
import { acpAgents, credentials, dataDir, optionalText, withShownDefault } from "./flags.ts"
import { lazily } from "./lazily.ts"
import { RUN_CONFIG } from "./runConfig.ts"

/** `planbridge acp`: Planbridge as an ACP agent on stdio (its handler: acp.ts, loaded when it runs). */
export const acp = Command.make(
  "acp",
  {
    provider: optionalText("provider", "the provider of new sessions (default: the first ready one the server offers)"),
    url: optionalText(
      "url",
      "a running server to use, e.g. http://127.0.0.1:4317 (default: the one on --data-dir, else one started here)"
    ),
    token: optionalText(
      "token",
      "the server's token (default: PLANBRIDGE_TOKEN, else the one stored in the data dir); never sent over ACP"
    ),
    demo: Flag.Boolean("demo").pipe(
      withShownDefault(false, "when it starts the server itself: the demo providers (scripted model, no login)")
    ),
    credentials,
    acpAgents,
    dataDir
  },
  lazily(
    () => import("./acp.ts"),
    (m, input) =>
      m.acp({
        ...input,
        provider: Option.getOrUndefined(input.provider),
        url: Option.getOrUndefined(input.url),
        token: Option.getOrUndefined(input.token),
        credentials: Option.getOrUndefined(input.credentials),
        version: RUN_CONFIG.version
      })
  )
).pipe(
  Command.withDescription(
    "Run Planbridge as an ACP agent on stdin/stdout, for editors that start agents (Zed, JetBrains IDEs). Each " +
      "ACP session is a Planbridge thread on the server at --url, or on the one running on --data-dir, or on one " +
      "this command starts there itself (on 127.0.0.1, a free port) for as long as the editor keeps it. Only ACP " +
      "goes to stdout; lines longer than 4 MiB are refused with an ACP error."
  ),
  Command.withShortDescription("run Planbridge as an ACP agent on stdio (for Zed, JetBrains and other ACP editors)"),
  Command.withExamples([
    {
      command: "planbridge acp --data-dir ~/.planbridge",
      description: "its own server on that data dir (or the running one)"
    },
    {
      command: "planbridge acp --demo --data-dir /tmp/pb-demo",
      description: "try it without a login (scripted model)"
    },
    { command: "planbridge acp --url http://127.0.0.1:4317 --provider claude", description: "a running server" }
  ]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "the editor closed stdin, or SIGINT/SIGTERM"],
    [ExitCode.failed, "no server could be reached or started (no token, no server at --url, a data dir in use)"],
    USAGE_ERROR
  ])
)
