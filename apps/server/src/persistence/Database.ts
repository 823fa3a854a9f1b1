import BetterSqlite3 from "better-sqlite3"
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import { migrate } from "drizzle-orm/better-sqlite3/migrator"
import { Context, Effect, Layer } from "effect"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { warnOnStderr, type Warn } from "./PrivateFiles.ts"
import * as schema from "./schema.ts"
import { makeProjectionLag } from "./ProjectionLag.ts"
import { preparePrivateSqliteFiles } from "./SqliteFiles.ts"
import { storeFailure } from "./StoreError.ts"
import {
  DEFAULT_WAL_CHECKPOINTER,
  makeWalCheckpointer,
  type WalCheckpointer,
  type WalCheckpointerOptions
} from "./WalCheckpointer.ts"

export type Db = BetterSQLite3Database<typeof schema> & { readonly $client: BetterSqlite3.Database }

export interface DatabaseOptions {
  /** A file path, or ":memory:" for throw-away databases. */
  readonly filename: string
  /** Told about a file of the database that was readable by others and had to be tightened. */
  readonly warn?: Warn
  /** When WAL checkpoints move to a thread of their own (WalCheckpointer.ts); never for ":memory:". */
  readonly walCheckpointer?: WalCheckpointerOptions
}

/**
 * Migrations ship with the repository and are applied at every start-up. Found upwards from
 * this module, which runs from its source (src/persistence/) or from the build (dist/chunks/).
 */
const findMigrations = (from: string): string => {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "migrations")
    if (existsSync(join(candidate, "meta", "_journal.json"))) return candidate
    if (dirname(dir) === dir) throw new Error(`no migrations folder above ${from}`)
  }
}
export const MIGRATIONS_FOLDER = findMigrations(dirname(fileURLToPath(import.meta.url)))

/**
 * The one SQLite connection of the process. better-sqlite3 is synchronous, so one connection
 * used from one thread is also the single writer: transactions never interleave. WAL lets
 * readers in other processes (the CLI beside a running server) see committed data. Only the
 * SQLite implementations of the store services (SqliteStore.ts) use it; everything else asks
 * those services.
 */
export class Database extends Context.Service<
  Database,
  {
    readonly db: Db
    readonly sqlite: BetterSqlite3.Database
    readonly filename: string
    /** Told of each commit of the event log; checkpoints the WAL off the event loop. */
    readonly walCheckpointer: WalCheckpointer
  }
>()("planbridge/Database") {
  static readonly make = (options: DatabaseOptions) =>
    Effect.acquireRelease(
      Effect.try({
        try: () => {
          if (options.filename !== ":memory:") {
            preparePrivateSqliteFiles(options.filename, options.warn ?? warnOnStderr)
          }
          const sqlite = new BetterSqlite3(options.filename)
          sqlite.pragma("journal_mode = WAL")
          // NORMAL is durable across process crashes in WAL mode; only a power loss can drop the last commits.
          sqlite.pragma("synchronous = NORMAL")
          sqlite.pragma("busy_timeout = 5000")
          sqlite.pragma("foreign_keys = ON")
          const db = drizzle({ client: sqlite, schema })
          migrate(db, { migrationsFolder: MIGRATIONS_FOLDER })
          // Crash recovery of the lagging projections (ProjectionLag.ts): the events committed past
          // the watermark are projected before anything reads the database.
          makeProjectionLag(db).catchUp()
          const walCheckpointer = makeWalCheckpointer(
            sqlite,
            options.filename,
            options.filename === ":memory:"
              ? { ...DEFAULT_WAL_CHECKPOINTER, startAtFrames: Infinity }
              : (options.walCheckpointer ?? DEFAULT_WAL_CHECKPOINTER),
            options.warn ?? warnOnStderr
          )
          return { db, sqlite, filename: options.filename, walCheckpointer }
        },
        catch: storeFailure("unavailable", `open database ${options.filename}`)
      }),
      // The checkpointer's connection is closed first: the last one to close checkpoints the WAL and removes it.
      ({ sqlite, walCheckpointer }) =>
        Effect.promise(() => walCheckpointer.stop()).pipe(
          // A checkpointer that does not stop (it never has) must not keep the database open: it is left behind.
          Effect.timeout("10 seconds"),
          Effect.ignore,
          Effect.andThen(Effect.sync(() => sqlite.close()))
        )
    )

  static readonly layer = (options: DatabaseOptions) => Layer.effect(Database, Database.make(options))
}
