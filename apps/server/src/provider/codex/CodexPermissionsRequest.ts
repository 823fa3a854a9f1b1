import { Schema } from "effect"
import { choice } from "./CodexElicitation.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * Codex `item/permissions/requestApproval`: the agent asks for more sandbox permissions (file
 * system paths, network) for a turn. A canonical approval with three choices: grant what was asked
 * for this turn or for the session (`scope`), or grant nothing (Codex's decline: an empty profile).
 * The grant echoes the requested profile exactly; nothing is widened or narrowed here.
 */

export const PERMISSIONS_METHOD = "item/permissions/requestApproval"

export const PermissionsApprovalParams = Schema.Struct({
  turnId: Schema.String,
  itemId: Schema.String,
  cwd: Schema.String,
  reason: Schema.optionalKey(Schema.NullOr(Schema.String)),
  permissions: Schema.Struct({
    fileSystem: Schema.optionalKey(Schema.NullOr(Schema.Unknown)),
    network: Schema.optionalKey(Schema.NullOr(Schema.Unknown))
  })
})
export type PermissionsApprovalParams = typeof PermissionsApprovalParams.Type

const granted = ({ permissions }: PermissionsApprovalParams) =>
  definedFields({ fileSystem: permissions.fileSystem ?? undefined, network: permissions.network ?? undefined })

/** Each choice with Codex's `PermissionsRequestApprovalResponse` for it. */
export const permissionsChoices = (params: PermissionsApprovalParams) => [
  choice("grant_turn", "Grant for this turn", "allow_once", { permissions: granted(params), scope: "turn" }),
  choice("grant_session", "Grant for this session", "allow_always", { permissions: granted(params), scope: "session" }),
  choice("decline", "Decline", "reject_once", { permissions: {} })
]

/** What is asked, in words for the card: the reason, then the requested profile as sent. */
export const permissionsDetail = (params: PermissionsApprovalParams): string =>
  [params.reason ?? undefined, `requested: ${JSON.stringify(granted(params))}`, `cwd: ${params.cwd}`]
    .filter((line): line is string => line !== undefined && line.length > 0)
    .join("\n")
