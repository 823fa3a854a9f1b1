import type { RuntimeEvent } from "@planbridge/contracts"

/**
 * What a graceful stop of Planbridge (SIGINT, SIGTERM: `serve` closing the server) does to the
 * sessions it closes, said as such. Closing a session ends its provider process, so each adapter
 * reports what it saw: the process gone (`provider_exited` prompts and requests, a failed turn)
 * and an exit that reads `graceful` (Codex, Claude) or `killed` (ACP, which SIGTERMs its group).
 * None of that says why; a reader would blame the agent. Events a session emits while the
 * server stops are therefore restated here as the server's doing, the way startup recovery
 * states a restart (`server_restarted`); exit code and signal stay as observed.
 */
export const SERVER_STOPPED_MESSAGE =
  "Planbridge was stopped (a graceful shutdown) while this was open, and closed the provider process with it"

export const asServerStopped = (event: RuntimeEvent): RuntimeEvent => {
  switch (event.type) {
    case "session.exited": {
      // A message of the adapter's own (an error, the stderr tail) is kept after ours.
      const own = event.payload.message
      const message = own === undefined || own === "" ? SERVER_STOPPED_MESSAGE : `${SERVER_STOPPED_MESSAGE}\n${own}`
      return { ...event, payload: { ...event.payload, exitKind: "server_stopped", message } }
    }
    case "user-input.resolved":
      return event.payload.resolution === "provider_exited"
        ? { ...event, payload: { ...event.payload, resolution: "server_stopped", reason: SERVER_STOPPED_MESSAGE } }
        : event
    case "request.resolved":
      return event.payload.resolution === "provider_exited"
        ? { ...event, payload: { ...event.payload, resolution: "server_stopped" } }
        : event
    case "turn.completed":
      // The turn did not fail: it was interrupted by the stop (as startup recovery says of a restart).
      return event.payload.status === "failed"
        ? {
            ...event,
            payload: {
              ...event.payload,
              status: "interrupted",
              error: { code: "server_stopped", message: SERVER_STOPPED_MESSAGE }
            }
          }
        : event
    default:
      return event
  }
}
