import type { AcpProfile } from "../AcpProfile.ts"
import { claudeAcpProfile } from "./claudeAcp.ts"
import { codexAcpProfile } from "./codexAcp.ts"
import { cursorProfile } from "./cursor.ts"

/** The built-in profiles by provider kind (transcript replay picks one from the meta line). */
export const builtinAcpProfiles: Readonly<Record<string, () => AcpProfile>> = {
  cursor: () => cursorProfile(),
  "acp-codex": () => codexAcpProfile(),
  "acp-claude": () => claudeAcpProfile()
}
