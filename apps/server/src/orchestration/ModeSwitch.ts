import type { OperatingMode } from "@planbridge/contracts"
import { Effect } from "effect"
import type { ThreadReads } from "../persistence/ThreadReads.ts"
import type { ProviderSession } from "../provider/ProviderAdapter.ts"
import { commandError } from "./CommandErrors.ts"
import { modeRefusal } from "./ModeRule.ts"

/**
 * The mode rule on a live session (`turn.start` with a mode, `mode.set`), for SessionManager:
 * `threads` is the projection, which knows every running turn.
 */
export const makeModeSwitchCheck = (threads: ThreadReads["Service"]) => {
  /**
   * A mode switch while a turn runs would be published as `mode.changed` at once while the turn
   * goes on in its old mode, so it is refused; the projection knows every running turn.
   */
  const refuseWhileTurnRuns = (threadId: string) =>
    Effect.flatMap(threads.runningTurn(threadId), (running) => {
      if (running === undefined) return Effect.void
      const message =
        `turn '${running}' is running in the current mode; ` + "switch modes after its turn.completed (or interrupt it)"
      return Effect.fail(commandError("busy", message))
    })

  /** The mode rule for `turn.start` with a mode and `mode.set`, on a live session. */
  const checkModeSwitch = (threadId: string, session: ProviderSession, mode: OperatingMode) =>
    Effect.gen(function* () {
      const capabilities = yield* session.capabilities
      const refusal = modeRefusal(session.provider, capabilities, mode)
      if (refusal !== undefined) return yield* Effect.fail(commandError("unsupported", refusal))
      if ((yield* session.mode) === mode) return
      if (!capabilities.supportsModeSwitching) {
        const message = `${session.provider} cannot switch modes in this session`
        return yield* Effect.fail(commandError("unsupported", message))
      }
      yield* refuseWhileTurnRuns(threadId)
    })

  return checkModeSwitch
}
