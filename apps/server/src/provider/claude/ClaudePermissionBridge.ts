import type { CanUseTool, PermissionResult as SdkPermissionResult } from "@anthropic-ai/claude-agent-sdk"
import { Effect, Option } from "effect"
import type { ProcessExit } from "./ClaudeProcess.ts"
import type { ClaudeSessionCore } from "./ClaudeSessionCore.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * The SDK's `canUseTool` callback: the call becomes a local transcript line (under the session's
 * lock), the callback then waits for the receipt the mapping writes once its request is closed
 * (our recorded decision, or the denial matching a cancellation or the CLI's exit), and its
 * result becomes a line too.
 */
export const makeCanUseTool = (deps: {
  readonly core: ClaudeSessionCore
  /** Whether the current turn was interrupted by us. */
  readonly interruptRequested: () => boolean
  /** Resolves when the CLI has exited. */
  readonly exited: Promise<ProcessExit>
}): CanUseTool => {
  const { core } = deps
  /**
   * The callback's signal aborts on our interrupt and when the CLI dies; then the exit
   * resolves the request `provider_exited`. Without our interrupt and without an exit, it is
   * a cancellation.
   */
  const onAbort = (toolUseID: string) =>
    Effect.gen(function* () {
      if (!deps.interruptRequested()) {
        const exit = yield* Effect.promise(() => deps.exited).pipe(Effect.timeoutOption("2 seconds"))
        if (Option.isSome(exit)) return
      }
      yield* Effect.ignore(core.cancel(toolUseID, "Interrupted by the user."))
    })

  return (toolName, toolInput, options) =>
    core.run(
      Effect.gen(function* () {
        const toolUseID = options.toolUseID
        const line = core.local({
          kind: "canUseTool",
          toolName,
          input: toolInput,
          options: { toolUseID, ...definedFields({ requestId: options.requestId }) }
        })
        const native = yield* core.awaitReceipt(toolUseID, line, options.signal, onAbort(toolUseID))
        const result: SdkPermissionResult =
          native.behavior === "allow"
            ? { behavior: "allow", updatedInput: { ...toolInput, ...native.patch } }
            : { behavior: "deny", message: native.message }
        yield* core.record(core.local({ kind: "canUseTool-result", toolName, toolUseID, result }))
        return result
      })
    )
}
