import { ThreadState, type ThreadSnapshot } from "@planbridge/contracts"
import { describe, expect, it } from "vitest"
import { sessionEndView } from "../../../web/src/state/sessionEnd.ts"
import { CLAUDE_CAPABILITIES } from "../../src/provider/claude/ClaudeModes.ts"

/**
 * What the web client shows for a thread that is not live: the reason, and a Resume control only
 * when the thread's capabilities say `supportsResume` (whatever the provider is called).
 */
const thread = (state: string, supportsResume: boolean | null): ThreadSnapshot => ({
  ...ThreadState.empty("thread-1", "codex").toSnapshot(),
  state,
  capabilities: supportsResume === null ? null : { ...CLAUDE_CAPABILITIES, supportsResume }
})

describe("the web client's session-ended view", () => {
  it("shows nothing while the session is live", () => {
    for (const state of ["starting", "idle", "running", "waiting", "error"])
      expect(sessionEndView(thread(state, true), undefined)).toBeUndefined()
  })

  it("offers Resume exactly when the capabilities say supportsResume", () => {
    expect(sessionEndView(thread("stopped", true), undefined)?.canResume).toBe(true)
    expect(sessionEndView(thread("stopped", false), undefined)?.canResume).toBe(false)
    // No session.configured ever arrived: nothing says it can resume.
    expect(sessionEndView(thread("stopped", null), undefined)?.canResume).toBe(false)
    // The same for any provider: the name is not consulted.
    const acp = { ...thread("stopped", false), provider: "claude" as const }
    expect(sessionEndView(acp, undefined)?.canResume).toBe(false)
  })

  it("says why the session ended, with the exit's message", () => {
    const view = (exitKind: "graceful" | "crashed" | "killed" | "server_restarted", message?: string) =>
      sessionEndView(thread("stopped", true), { exitKind, message })?.reason
    expect(view("server_restarted")).toBe("The server restarted, and the session with it.")
    expect(view("crashed", "exit code 1")).toBe("The provider process crashed. exit code 1")
    expect(view("killed")).toBe("The provider process was killed.")
    expect(view("graceful")).toBe("The session ended.")
    expect(sessionEndView(thread("stopped", true), undefined)?.reason).toBe("The session has ended.")
  })
})
