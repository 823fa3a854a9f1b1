import { Effect } from "effect"
import { replayError } from "../kernel/ReplayError.ts"
import { replayIds } from "../kernel/ids.ts"
import { stampAll, type ReplayMapping } from "../kernel/replay.ts"
import type { ThreadId } from "@planbridge/contracts"
import { step, unmappable } from "./AcpMapping.ts"
import { initialAcpState, type AcpState } from "./AcpState.ts"
import { builtinAcpProfiles } from "./profiles/index.ts"

/**
 * ACP transcripts (the kernel's one format) replay through the live session's own `step`
 * (AcpMapping.ts). Ids (`kernel/ids.ts`): in the scope the live session used (the meta line's
 * `idPrefix`) or `<threadId>:r`, so a replay reproduces the live session's ids.
 */

interface AcpReplayState {
  readonly mapping: AcpState
  readonly envelope: { readonly provider: string; readonly threadId: ThreadId }
}

export const acpReplayMapping: ReplayMapping<AcpReplayState> = {
  label: "ACP",
  accepts: (provider) => builtinAcpProfiles[provider] !== undefined,
  start: (meta, threadId) => {
    const makeProfile = builtinAcpProfiles[meta.provider]
    if (makeProfile === undefined) return Effect.fail(replayError(`no ACP profile for provider '${meta.provider}'`, 0))
    const profile = makeProfile()
    const envelope = { provider: profile.provider, threadId }
    return Effect.map(replayIds(meta, threadId), ({ scope, eventId }) => ({
      state: { mapping: initialAcpState(profile, scope), envelope },
      eventId
    }))
  },
  step: (state, line, ctx) =>
    Effect.suspend(() => {
      const refused = unmappable(line)
      if (refused !== undefined) return Effect.fail(replayError(refused, ctx.index))
      try {
        const { state: mapping, drafts } = step(state.mapping, line)
        return Effect.succeed({ state: { ...state, mapping }, events: stampAll(drafts, ctx, state.envelope) })
      } catch (error) {
        return Effect.fail(replayError(`mapping failed: ${String(error)}`, ctx.index, error))
      }
    })
}
