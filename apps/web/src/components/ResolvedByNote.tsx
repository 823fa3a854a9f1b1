import { resolvedByPhrase, type ResolvedBy } from "@planbridge/contracts"
import { clientId } from "../clientId.ts"

/**
 * Who or what resolved a card, in the words every client uses (`resolvedByPhrase`): "by you on
 * this browser", "by a person with the CLI", "by the server". Nothing for what was resolved
 * before the server recorded it.
 */
export const ResolvedByNote = ({ by }: { readonly by: ResolvedBy | null }) =>
  by === null ? null : <span className="muted resolved-by">{resolvedByPhrase(by, clientId)}</span>
