import { Layer } from "effect"
import { answerTargets, type AnswerTargets } from "./AnswerTargets.ts"
import type { CommandRelay } from "./CommandRelay.ts"
import { clientRequestStore, type ClientRequestStore } from "./ClientRequestStore.ts"
import type { EventStore } from "./EventStore.ts"
import type { NotificationStore } from "./NotificationStore.ts"
import { operatorQueries, type OperatorQueries } from "./OperatorQueries.ts"
import type { ProjectionRebuild } from "./ProjectionRebuild.ts"
import { recoveryQueries, type RecoveryQueries } from "./RecoveryQueries.ts"
import { resumeTargets, type ResumeTargets } from "./ResumeTargets.ts"
import type { SessionLeases } from "./SessionLeases.ts"
import type { StatementPort } from "./StatementPort.ts"
import type { ThreadReads } from "./ThreadReads.ts"

/**
 * Everything the rest of the server asks of persistence. A storage engine is a Layer that
 * provides all of them (SQLite: `sqliteStore` in SqliteStore.ts); nothing outside persistence/
 * sees a connection, a table or a query.
 */
export type StoreServices =
  | EventStore
  | ThreadReads
  | AnswerTargets
  | ClientRequestStore
  | OperatorQueries
  | RecoveryQueries
  | ProjectionRebuild
  | ResumeTargets
  | NotificationStore

/**
 * The store services written once over the statement port (StatementPort.ts): each engine
 * provides its port (SqliteStatementPort.ts, postgres/PgStatementPort.ts) and gets these as they
 * are. What the engines do apart (the event log, snapshots, the notification outbox) stays in
 * each engine's own layers.
 */
export const portedStoreServices: Layer.Layer<
  AnswerTargets | ClientRequestStore | OperatorQueries | RecoveryQueries | ResumeTargets,
  never,
  StatementPort
> = Layer.mergeAll(answerTargets, clientRequestStore, operatorQueries, recoveryQueries, resumeTargets)

/**
 * What a store shared by several `planbridge serve` processes adds (PostgreSQL): session leases
 * and the relay of commands to the replica that owns a session. Absent on SQLite (one server);
 * the session manager asks for them with `Effect.serviceOption`.
 */
export type ReplicaServices = SessionLeases | CommandRelay

/** How a `serve` joins its replicas: their shared token (it seals relayed commands), the lease time. */
export interface ReplicaOptions {
  readonly token: string
  readonly leaseTtlMs: number
}
