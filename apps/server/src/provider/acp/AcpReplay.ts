import { Effect, Exit, Schema } from "effect"
import { ReplayError } from "../kernel/ReplayError.ts"
import { stampAll, type ReplayMapping } from "../kernel/replay.ts"
import type { ThreadId } from "@planbridge/contracts"
import { makeAcpMappingState, step, unmappable, type AcpMappingState } from "./AcpMapping.ts"
import { builtinAcpProfiles } from "./profiles/index.ts"
import { AcpTranslator } from "./AcpTranslator.ts"

/**
 * ACP transcripts (the kernel's one format) replay through the live session's own `step`
 * (mapping.ts). Event ids: `<idPrefix>:event:<n>`, the prefix the live session used (the meta
 * line's `idPrefix`) or `<threadId>:r`.
 */

const decodeIdPrefix = Schema.decodeUnknownExit(Schema.Struct({ idPrefix: Schema.optionalKey(Schema.String) }))

type AcpReplayState = AcpMappingState & {
  readonly envelope: { readonly provider: string; readonly threadId: ThreadId }
}

export const acpReplayMapping: ReplayMapping<AcpReplayState> = {
  label: "ACP",
  accepts: (provider) => builtinAcpProfiles[provider] !== undefined,
  start: (meta, threadId) => {
    const makeProfile = builtinAcpProfiles[meta.provider]
    const prefix = decodeIdPrefix(meta)
    if (makeProfile === undefined || Exit.isFailure(prefix))
      return Effect.fail(new ReplayError({ message: `no ACP profile for provider '${meta.provider}'`, line: 0 }))
    const profile = makeProfile()
    const idPrefix = prefix.value.idPrefix ?? `${threadId}:r`
    const envelope = { provider: profile.provider, threadId }
    return Effect.succeed({
      state: { ...makeAcpMappingState(new AcpTranslator(profile, idPrefix)), envelope },
      eventId: ({ n }) => `${idPrefix}:event:${n + 1}`
    })
  },
  step: (state, line, ctx) =>
    Effect.suspend(() => {
      const refused = unmappable(line)
      if (refused !== undefined) return Effect.fail(new ReplayError({ message: refused, line: ctx.index }))
      try {
        const { drafts } = step(state, line)
        return Effect.succeed({ state, events: stampAll(drafts, ctx, state.envelope) })
      } catch (error) {
        return Effect.fail(new ReplayError({ message: `mapping failed: ${String(error)}`, line: ctx.index }))
      }
    })
}
