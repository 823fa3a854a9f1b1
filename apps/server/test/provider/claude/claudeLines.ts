import type { ThreadId } from "@planbridge/contracts"
import { step } from "../../../src/provider/claude/ClaudeMapping.ts"
import { initialClaudeState } from "../../../src/provider/claude/ClaudeMappingState.ts"
import type { ClaudeLine, ClaudeLocal, SdkMessage } from "../../../src/provider/claude/ClaudeTranscript.ts"
import type { EventDraft } from "../../../src/provider/kernel/EventDraft.ts"

/** Hand-written Claude transcript lines, and the pure mapping stepped through them. */

export const local = (t: number, msg: ClaudeLocal): ClaudeLine => ({ t, dir: "local", msg })
export const sdk = (t: number, msg: SdkMessage): ClaudeLine => ({ t, dir: "in", msg })

/** A mapping from a fresh state: each call steps one line and gives its drafts, keeping the state. */
export const makeMapping = (threadId: ThreadId) => {
  let state = initialClaudeState(threadId)
  return (line: ClaudeLine): ReadonlyArray<EventDraft> => {
    const stepped = step(state, line)
    state = stepped.state
    return stepped.drafts
  }
}
