import { eq } from "drizzle-orm"
import { Schema } from "effect"
import type { Db } from "./Database.ts"
import { clientRequests } from "./schema.ts"

/**
 * The stored outcomes of answer-like commands, by client request id (`client_requests`). The
 * outcome column is decoded with its Schema; `command`, `target` and `fingerprint` are null in
 * rows stored before migration 0001 added them.
 */

/** Outcome of an answer-like command, remembered per client request id. */
export const ResolutionOutcome = Schema.Struct({
  promptId: Schema.optionalKey(Schema.String),
  requestId: Schema.optionalKey(Schema.String),
  planId: Schema.optionalKey(Schema.String),
  status: Schema.Literal("resolved")
})
export type ResolutionOutcome = typeof ResolutionOutcome.Type

const StoredOutcome = Schema.fromJsonString(ResolutionOutcome)
const decodeOutcome = Schema.decodeUnknownSync(StoredOutcome)
const encodeOutcome = Schema.encodeSync(StoredOutcome)

export interface StoredClientRequest {
  readonly clientRequestId: string
  readonly outcome: ResolutionOutcome
  readonly command: string | null
  readonly target: string | null
  readonly fingerprint: string | null
}

export const findClientRequest = (db: Db, clientRequestId: string): StoredClientRequest | undefined => {
  const row = db.select().from(clientRequests).where(eq(clientRequests.clientRequestId, clientRequestId)).get()
  if (row === undefined) return undefined
  const { command, target, fingerprint } = row
  return { clientRequestId, outcome: decodeOutcome(row.outcome), command, target, fingerprint }
}

/** Keeps the first outcome of an id: a second insert for it changes nothing. */
export const insertClientRequest = (db: Db, stored: StoredClientRequest): void => {
  db.insert(clientRequests)
    .values({ ...stored, outcome: encodeOutcome(stored.outcome), createdAt: new Date().toISOString() })
    .onConflictDoNothing()
    .run()
}
