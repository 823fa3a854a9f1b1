import { Result } from "effect"
import { draftReplay } from "../kernel/replay.ts"
import { mappable, step } from "./AcpMapping.ts"
import { initialAcpState } from "./AcpState.ts"
import { builtinAcpProfiles } from "./profiles/index.ts"

/**
 * ACP transcripts (the kernel's one format) replay through the live session's own `step`
 * (AcpMapping.ts). Ids (`kernel/ids.ts`): in the scope the live session used (the meta line's
 * `idPrefix`) or `<threadId>:r`, so a replay reproduces the live session's ids.
 */
export const acpReplayMapping = draftReplay({
  label: "ACP",
  accepts: (provider) => builtinAcpProfiles[provider] !== undefined,
  start: (meta, _threadId, scope) => {
    const makeProfile = builtinAcpProfiles[meta.provider]
    if (makeProfile === undefined) return Result.fail(`no ACP profile for provider '${meta.provider}'`)
    const profile = makeProfile()
    return Result.succeed({ state: initialAcpState(profile, scope), provider: profile.provider })
  },
  decode: mappable,
  step
})
