import type { OperatingMode, PromptId } from "@planbridge/contracts"
import { AdapterError } from "../ProviderAdapter.ts"
import type { CodexMappingState, OpenServerRequest } from "./CodexMappingState.ts"

/** What a Codex session refuses, decided from its mapping state (pure; CodexAdapter.ts asks). */

export const openPrompt = (state: CodexMappingState, promptId: PromptId): OpenServerRequest | undefined =>
  [...state.serverRequests.values()].find((r) => r.prompt?.promptId === promptId && !r.responded && !r.promptResolved)

/** The one refusal for a mode Codex lacks, whichever command asked for it. */
export const noSuchMode = (mode: OperatingMode) => `Codex has no '${mode}' mode (plan and default only)`

/**
 * Codex takes a mode per `turn/start`, so a switch while a turn runs would be recorded (and
 * published) as the mode in effect while the turn goes on in its old one. Checked under the
 * lock, from the moment `turn/start` is sent (its response may reach the caller before the
 * mapping has taken it in) until `turn/completed`, so earlier than the projection knows the turn.
 */
export const switchWhileRunning = (state: CodexMappingState, mode: OperatingMode): AdapterError | undefined => {
  if (state.mode === mode) return undefined
  const starting = [...state.clientRequests.values()].some((r) => r.method === "turn/start")
  if (state.activeTurnId === null && !starting) return undefined
  const turn = state.activeTurnId ?? "(starting)"
  const message = `turn ${turn} is running in '${state.mode}' mode; switch after it ends`
  return new AdapterError({ reason: "busy", message })
}
