import { Layer } from "effect"
import { Database, type DatabaseOptions } from "./Database.ts"
import { SqliteEventLog } from "./SqliteEventLog.ts"
import { sqliteEventStore } from "./SqliteEventStore.ts"
import { sqliteNotificationStore } from "./SqliteNotificationStore.ts"
import { sqliteProjectionRebuild } from "./SqliteProjectionRebuild.ts"
import { sqliteStatementPort } from "./SqliteStatementPort.ts"
import { sqliteThreadReads } from "./SqliteThreadReads.ts"
import type { StoreError } from "./StoreError.ts"
import { portedStoreServices, type StoreServices } from "./StoreServices.ts"

/**
 * The store services over an open SQLite `Database`. The event log below `EventStore` and
 * `ProjectionRebuild` is built once, so its caches exist once.
 */
export const sqliteStoreServices: Layer.Layer<StoreServices, StoreError, Database> = Layer.mergeAll(
  sqliteEventStore,
  sqliteProjectionRebuild
).pipe(
  Layer.provide(SqliteEventLog.layer),
  Layer.merge(
    Layer.mergeAll(sqliteThreadReads, sqliteNotificationStore, portedStoreServices).pipe(
      Layer.provide(sqliteStatementPort)
    )
  )
)

/** The store on one SQLite file (migrated on open, closed with the layer). */
export const sqliteStore = (options: DatabaseOptions): Layer.Layer<StoreServices, StoreError> =>
  sqliteStoreServices.pipe(Layer.provide(Database.layer(options)))
