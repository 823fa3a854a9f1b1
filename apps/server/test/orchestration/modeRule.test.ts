import type { OperatingMode, ProviderCapabilities } from "@planbridge/contracts"
import { describe, expect, it } from "vitest"
import { modeRefusal } from "../../src/orchestration/ModeRule.ts"
import { cursorProfile } from "../../src/provider/acp/profiles/cursor.ts"
import { CLAUDE_CAPABILITIES } from "../../src/provider/claude/ClaudeModes.ts"
import { codexCapabilities } from "../../src/provider/codex/CodexMappingState.ts"

/**
 * One rule for a requested mode, the same for every provider: read from the capabilities the
 * provider publishes, never from its name. (`session.start`, `turn.start` and `mode.set` all
 * apply it; the WebSocket tests show the three giving the same answer on the real Codex.)
 */
const MODES: ReadonlyArray<OperatingMode> = ["default", "plan", "ask", "execute", "unknown"]
/** Modes the rule lets through to the adapter (which still refuses a `default` or `execute` it lacks). */
const passed = (provider: string, capabilities: ProviderCapabilities) =>
  MODES.filter((mode) => modeRefusal(provider, capabilities, mode) === undefined)

describe("the mode rule", () => {
  it("lets plan and ask through exactly where the capabilities offer them, and never 'unknown'", () => {
    expect(passed("codex", codexCapabilities)).toEqual(["default", "plan", "execute"])
    expect(passed("claude", CLAUDE_CAPABILITIES)).toEqual(["default", "plan", "execute"])
    expect(passed("cursor", cursorProfile().capabilities)).toEqual(["default", "plan", "ask", "execute"])
    const none = { ...codexCapabilities, supportsPlanMode: false, supportsAskMode: false }
    expect(passed("acp-x", none)).toEqual(["default", "execute"])
    expect(modeRefusal("codex", codexCapabilities, "ask")).toBe("codex offers no 'ask' mode (supportsAskMode is false)")
  })
})
