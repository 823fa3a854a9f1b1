import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ExitCode, ExitCodes, USAGE_ERROR } from "./exitCodes.ts"
import { dataDir, json, serverUrl } from "./flags.ts"
import { lazily } from "./lazily.ts"

/**
 * `planbridge notifications status`: the notification outbox of the running server (issue 29),
 * its sinks, counts and latest attempts with their outcome. Its module (prompts.ts, which talks to
 * the operator API) is imported only when it runs.
 */
const notificationsParent = Command.make("notifications").pipe(
  Command.withSharedFlags({ url: serverUrl, dataDir, json })
)

const status = Command.make("status", {}, (input) =>
  Effect.flatMap(notificationsParent, (shared) =>
    lazily(
      () => import("./prompts.ts"),
      (m, _: typeof input) =>
        m.notificationStatus({
          command: "planbridge notifications status",
          url: Option.getOrUndefined(shared.url),
          dataDir: shared.dataDir,
          json: shared.json
        })
    )(input)
  )
).pipe(
  Command.withDescription(
    "Show the notification outbox: the sinks (Web Push subscriptions, webhooks), how many notifications are " +
      "pending, sent or failed, and the latest delivery attempts with their HTTP status or error."
  ),
  Command.withShortDescription("the notification outbox: sinks, counts, latest attempts"),
  Command.withExamples([{ command: "planbridge notifications status --json" }]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "done"],
    [ExitCode.failed, "the server refused, or no server answered"],
    USAGE_ERROR
  ])
)

export const notifications = notificationsParent.pipe(
  Command.withDescription("Look at the running server's notifications (--json for JSON)."),
  Command.withShortDescription("the running server's notification outbox"),
  Command.withSubcommands([status]),
  Command.withExamples([{ command: "planbridge notifications status" }]),
  Command.annotate(ExitCodes, [
    [ExitCode.ok, "done"],
    [ExitCode.failed, "the server refused, or no server answered"],
    USAGE_ERROR
  ])
)
