import { ResolutionOutcome } from "@planbridge/contracts"
import { eq } from "drizzle-orm"
import { Context, Effect, Layer, Schema } from "effect"
import { attempt, failsAs, firstRow, StatementPort } from "./StatementPort.ts"
import type { StoreError } from "./StoreError.ts"

/** Outcome of an answer-like command, remembered per client request id: the command table's (contracts). */
export { ResolutionOutcome }

/**
 * What a client request id was first used for. `command`, `target` and `fingerprint` are null
 * for outcomes stored before they were recorded (only the outcome's ids are known for those).
 */
export interface StoredClientRequest {
  readonly clientRequestId: string
  readonly outcome: ResolutionOutcome
  readonly command: string | null
  readonly target: string | null
  readonly fingerprint: string | null
}

/**
 * The stored outcomes of answer-like commands, by client request id. Not a projection: nothing
 * in the event log says what a client's id was for, so a rebuild leaves it alone.
 */
export class ClientRequestStore extends Context.Service<
  ClientRequestStore,
  {
    readonly find: (clientRequestId: string) => Effect.Effect<StoredClientRequest | undefined, StoreError>
    /** Keeps the first outcome of an id: a second insert for it changes nothing. */
    readonly insert: (stored: StoredClientRequest) => Effect.Effect<void, StoreError>
  }
>()("planbridge/ClientRequestStore") {}

/** The `outcome` column, decoded with its Schema. */
const StoredOutcome = Schema.fromJsonString(ResolutionOutcome)
const decodeOutcome = Schema.decodeUnknownSync(StoredOutcome)
const encodeOutcome = Schema.encodeSync(StoredOutcome)

/** `ClientRequestStore` on either engine (`client_requests`): the first outcome of an id is kept, across replicas too. */
export const clientRequestStore = Layer.effect(
  ClientRequestStore,
  Effect.gen(function* () {
    const port = yield* StatementPort
    const { db, tables } = port
    const { clientRequests } = tables
    return ClientRequestStore.of({
      find: (clientRequestId) =>
        firstRow(
          port,
          db.select().from(clientRequests).where(eq(clientRequests.clientRequestId, clientRequestId))
        ).pipe(
          Effect.flatMap((row) =>
            attempt((): StoredClientRequest | undefined => {
              if (row === undefined) return undefined
              const { command, target, fingerprint } = row
              return { clientRequestId, outcome: decodeOutcome(row.outcome), command, target, fingerprint }
            })
          ),
          failsAs("read", `read client request ${clientRequestId}`)
        ),
      insert: (stored) =>
        attempt(() => ({
          ...stored,
          outcome: encodeOutcome(stored.outcome),
          createdAt: new Date().toISOString()
        })).pipe(
          Effect.flatMap((row) => port.run(db.insert(clientRequests).values(row).onConflictDoNothing())),
          Effect.asVoid,
          failsAs("write", `store client request ${stored.clientRequestId}`)
        )
    })
  })
)
