import { Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { StoreError } from "../StoreError.ts"
import { portedStoreServices, type ReplicaOptions, type ReplicaServices, type StoreServices } from "../StoreServices.ts"
import { pgCommandRelay } from "./PgCommandRelay.ts"
import { pgSessionLeases } from "./PgSessionLeases.ts"
import { pgProviderStates } from "./PgProviderStates.ts"
import type { ProviderStates } from "../ProviderStates.ts"
import { PgDatabase, type PgDatabaseOptions } from "./PgDatabase.ts"
import { PgEventLog } from "./PgEventLog.ts"
import { pgEventStore } from "./PgEventStore.ts"
import { pgNotificationStore } from "./PgNotificationStore.ts"
import { pgProjectionRebuild } from "./PgProjectionRebuild.ts"
import { pgStatementPort } from "./PgStatementPort.ts"
import { pgThreadReads } from "./PgThreadReads.ts"

/**
 * The store services on a PostgreSQL database (migrated on open, the pool ended with the
 * layer). Several processes may share the database: a thread's appends are serialised by its
 * own advisory lock, and each process publishes the others' commits from their NOTIFYs. A `serve` is a
 * replica (`replica`): it also holds session leases and relays commands to their owners.
 */
export const postgresStore = (
  options: PgDatabaseOptions & { readonly replica?: ReplicaOptions }
): Layer.Layer<StoreServices | ReplicaServices | ProviderStates, StoreError> =>
  Layer.mergeAll(
    pgEventStore,
    pgProjectionRebuild,
    ...(options.replica === undefined
      ? []
      : [
          pgSessionLeases(options.replica.leaseTtlMs),
          pgCommandRelay({ token: options.replica.token, ttlMs: options.replica.leaseTtlMs }),
          pgProviderStates(options.replica.token)
        ])
  ).pipe(
    Layer.provide(PgEventLog.layer(randomUUID())),
    Layer.merge(
      Layer.mergeAll(pgThreadReads, pgNotificationStore, portedStoreServices).pipe(Layer.provide(pgStatementPort))
    ),
    Layer.provide(PgDatabase.layer(options))
  )
