import { eq } from "drizzle-orm"
import { Effect, Layer, Schema } from "effect"
import { ClientRequestStore, ResolutionOutcome } from "./ClientRequestStore.ts"
import { Database } from "./Database.ts"
import { storeFailure } from "./StoreError.ts"
import { clientRequests } from "./schema.ts"

/** The `outcome` column, decoded with its Schema. */
const StoredOutcome = Schema.fromJsonString(ResolutionOutcome)
const decodeOutcome = Schema.decodeUnknownSync(StoredOutcome)
const encodeOutcome = Schema.encodeSync(StoredOutcome)

/** `ClientRequestStore` on SQLite (`client_requests`). */
export const sqliteClientRequestStore = Layer.effect(
  ClientRequestStore,
  Effect.gen(function* () {
    const { db } = yield* Database
    return ClientRequestStore.of({
      find: (clientRequestId) =>
        Effect.try({
          try: () => {
            const row = db
              .select()
              .from(clientRequests)
              .where(eq(clientRequests.clientRequestId, clientRequestId))
              .get()
            if (row === undefined) return undefined
            const { command, target, fingerprint } = row
            return { clientRequestId, outcome: decodeOutcome(row.outcome), command, target, fingerprint }
          },
          catch: storeFailure("read", `read client request ${clientRequestId}`)
        }),
      insert: (stored) =>
        Effect.try({
          try: () => {
            const row = { ...stored, outcome: encodeOutcome(stored.outcome), createdAt: new Date().toISOString() }
            db.insert(clientRequests).values(row).onConflictDoNothing().run()
          },
          catch: storeFailure("write", `store client request ${stored.clientRequestId}`)
        })
    })
  })
)
