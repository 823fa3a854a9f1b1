import { eq } from "drizzle-orm"
import { Effect, Layer, Schema } from "effect"
import { ClientRequestStore, ResolutionOutcome } from "../ClientRequestStore.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { clientRequests } from "./schema.ts"

const StoredOutcome = Schema.fromJsonString(ResolutionOutcome)
const decodeOutcome = Schema.decodeUnknownSync(StoredOutcome)
const encodeOutcome = Schema.encodeSync(StoredOutcome)

/** `ClientRequestStore` on PostgreSQL (`client_requests`): the first outcome of an id is kept, across replicas too. */
export const pgClientRequestStore = Layer.effect(
  ClientRequestStore,
  Effect.gen(function* () {
    const { db } = yield* PgDatabase
    return ClientRequestStore.of({
      find: (clientRequestId) =>
        Effect.tryPromise({
          try: async () => {
            const [row] = await db
              .select()
              .from(clientRequests)
              .where(eq(clientRequests.clientRequestId, clientRequestId))
            if (row === undefined) return undefined
            const { command, target, fingerprint } = row
            return { clientRequestId, outcome: decodeOutcome(row.outcome), command, target, fingerprint }
          },
          catch: storeFailure("read", `read client request ${clientRequestId}`)
        }),
      insert: (stored) =>
        Effect.tryPromise({
          try: async () => {
            const row = { ...stored, outcome: encodeOutcome(stored.outcome), createdAt: new Date().toISOString() }
            await db.insert(clientRequests).values(row).onConflictDoNothing()
          },
          catch: storeFailure("write", `store client request ${stored.clientRequestId}`)
        })
    })
  })
)
