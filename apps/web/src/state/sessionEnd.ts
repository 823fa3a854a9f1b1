import type { ThreadSnapshot } from "@planbridge/contracts"

/** How the thread's last provider session ended, from its `session.exited` (when it was seen as an event). */
export interface SessionExit {
  readonly exitKind: "graceful" | "crashed" | "killed" | "server_restarted" | "server_stopped"
  readonly message: string | undefined
}

/** What a thread that is not live shows: why, and whether a Resume control is offered. */
export interface SessionEndView {
  readonly reason: string
  readonly canResume: boolean
}

const because: Record<SessionExit["exitKind"], string> = {
  graceful: "The session ended.",
  crashed: "The provider process crashed.",
  killed: "The provider process was killed.",
  server_restarted: "The server restarted, and the session with it.",
  server_stopped: "The server was stopped, and the session with it."
}

/**
 * Undefined while the thread's session is live. A stopped thread says why (a snapshot alone does
 * not say: then only that it ended) and offers Resume exactly when its capabilities say
 * `supportsResume`; the provider's name never decides it.
 */
export const sessionEndView = (thread: ThreadSnapshot, exit: SessionExit | undefined): SessionEndView | undefined => {
  if (thread.state !== "stopped") return undefined
  const reason = exit === undefined ? "The session has ended." : because[exit.exitKind]
  const detail = exit?.message !== undefined && exit.message !== "" ? ` ${exit.message}` : ""
  return { reason: `${reason}${detail}`, canResume: thread.capabilities?.supportsResume === true }
}
