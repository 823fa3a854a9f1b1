import type { CanUseTool, PermissionResult as SdkPermissionResult } from "@anthropic-ai/claude-agent-sdk"
import { Deferred, Effect } from "effect"
import type { NativeDecision } from "./ClaudeDecisions.ts"
import type { ClaudeMapper } from "./ClaudeMapping.ts"
import type { ProcessExit } from "./ClaudeProcess.ts"
import { cancelDecision } from "./ClaudeRequests.ts"
import type { ClaudeSessionCore } from "./ClaudeSessionCore.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * The SDK's `canUseTool` callback: the call becomes a transcript line (under the session's lock),
 * the callback then waits for what the session core hands it (our recorded decision, or the
 * denial matching a cancellation or the CLI's exit), and its result becomes a line too.
 */
export const makeCanUseTool = (deps: {
  readonly core: ClaudeSessionCore
  readonly mapper: ClaudeMapper
  /** Runs an effect as a fiber of the session (the SDK calls us from plain promises). */
  readonly run: <A>(effect: Effect.Effect<A>) => Promise<A>
  /** Whether the current turn was interrupted by us. */
  readonly interruptRequested: () => boolean
  /** Resolves when the CLI has exited. */
  readonly exited: Promise<ProcessExit>
}): CanUseTool => {
  const { core, mapper, run } = deps
  const { withLock, record, recordUnlocked, local, decideUnlocked, cancel, handOver } = core
  /**
   * The callback's signal aborts on our interrupt and when the CLI dies; then the exit
   * resolves the request `provider_exited`. Without our interrupt and without an exit, it is
   * a cancellation.
   */
  const onAbort = (toolUseID: string) =>
    Effect.gen(function* () {
      if (!deps.interruptRequested()) {
        const exit = yield* Effect.promise(() => deps.exited).pipe(Effect.timeoutOption("2 seconds"))
        if (exit._tag === "Some") return
      }
      yield* Effect.ignore(cancel(toolUseID, "Interrupted by the user."))
    })

  const canUseTool: CanUseTool = (toolName, toolInput, options) =>
    run(
      Effect.gen(function* () {
        const toolUseID = options.toolUseID
        const line = local({
          _local: "canUseTool",
          toolName,
          input: toolInput,
          options: { toolUseID, ...definedFields({ requestId: options.requestId }) }
        })
        const decision = yield* withLock(
          Effect.gen(function* () {
            const recorded = yield* recordUnlocked(line)
            // Malformed input opens no request: nothing to decide, nothing recorded as resolved.
            if (!mapper.knows(toolUseID)) return undefined
            const deferred = core.wait(toolUseID)
            const open = mapper.openRequests().find((r) => r.toolUseID === toolUseID)
            if (!recorded && open !== undefined) {
              // Clients may never have seen this request: close it rather than leave the CLI waiting on nobody.
              const denial = { behavior: "deny", message: "Planbridge could not present this request." } as const
              yield* Effect.ignore(decideUnlocked(open, cancelDecision(open, "it could not be recorded"), denial))
            }
            handOver()
            return deferred
          })
        )
        let native: NativeDecision = { behavior: "deny", message: "Planbridge could not present this request." }
        if (decision !== undefined) {
          const abort = () => void run(onAbort(toolUseID))
          options.signal.addEventListener("abort", abort, { once: true })
          if (options.signal.aborted) abort()
          native = yield* Deferred.await(decision)
          options.signal.removeEventListener("abort", abort)
        }
        const result: SdkPermissionResult =
          native.behavior === "allow"
            ? { behavior: "allow", updatedInput: { ...toolInput, ...native.patch } }
            : { behavior: "deny", message: native.message }
        yield* record(local({ _local: "canUseTool-result", toolName, toolUseID, result }))
        return result
      })
    )
  return canUseTool
}
