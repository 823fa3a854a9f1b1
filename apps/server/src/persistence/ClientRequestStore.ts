import { ResolutionOutcome } from "@planbridge/contracts"
import { Context, type Effect } from "effect"
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
