import { Effect, Layer } from "effect"
import type { Warn } from "./PrivateFiles.ts"
import { isPostgresUrl } from "./postgres/StoreUrl.ts"
import { databaseFileIn } from "./SqliteFiles.ts"
import { sqliteStore } from "./SqliteStore.ts"
import { storeError, type StoreError } from "./StoreError.ts"
import type { ReplicaOptions, StoreServices } from "./StoreServices.ts"

/** The environment variable that stands for `--store`. */
export const STORE_ENV = "PLANBRIDGE_STORE"

/**
 * The store a command runs on: PostgreSQL when `store` is a `postgres://` (or `postgresql://`)
 * URL, else the SQLite file in the data directory (`store` absent). Anything else is refused
 * with a StoreError that says what is accepted. The composition roots (http/HttpServer.ts,
 * cli/store.ts) call this; nothing else names an engine. A PostgreSQL store for `serve` also
 * provides the ReplicaServices (looked up with `Effect.serviceOption`).
 */
export const selectStore = (options: {
  readonly store: string | undefined
  readonly dataDir: string
  readonly warn?: Warn
  /** For `serve`: on PostgreSQL it is one replica of the deployment (leases, relayed commands). */
  readonly replica?: ReplicaOptions
}): Layer.Layer<StoreServices, StoreError> => {
  const { store } = options
  if (store === undefined || store === "") {
    return sqliteStore({
      filename: databaseFileIn(options.dataDir),
      ...(options.warn ? { warn: options.warn } : {})
    })
  }
  // Loaded only for a PostgreSQL store: SQLite's start-up does not pay for the driver.
  if (isPostgresUrl(store))
    return Layer.unwrap(
      Effect.promise(() => import("./postgres/PgStore.ts")).pipe(
        Effect.map((m) =>
          m.postgresStore({ url: store, ...(options.replica === undefined ? {} : { replica: options.replica }) })
        )
      )
    )
  // The value itself is not repeated: a mistyped URL may carry a password.
  const message = "--store (or PLANBRIDGE_STORE) must be a postgres:// URL, or absent for SQLite in the data directory"
  return Layer.effectContext(Effect.fail(storeError("unavailable", { message })))
}

/** `--store` as given, else the environment's, else undefined (SQLite). */
export const storeOption = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined =>
  flag ?? (env[STORE_ENV] === "" ? undefined : env[STORE_ENV])
