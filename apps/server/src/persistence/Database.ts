import BetterSqlite3 from "better-sqlite3"
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import { migrate } from "drizzle-orm/better-sqlite3/migrator"
import { Context, Effect, Layer, Schema } from "effect"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { ensurePrivateDir, ensurePrivateFile, warnOnStderr, type Warn } from "./PrivateFiles.ts"
import * as schema from "./schema.ts"

export type Db = BetterSQLite3Database<typeof schema> & { readonly $client: BetterSqlite3.Database }

export class DatabaseError extends Schema.TaggedError<DatabaseError>()("DatabaseError", {
  message: Schema.String
}) {}

export interface DatabaseOptions {
  /** A file path, or ":memory:" for throw-away databases. */
  readonly filename: string
  /** Told about a file of the database that was readable by others and had to be tightened. */
  readonly warn?: Warn
}

/** Migrations ship with the repository and are applied at every start-up. */
export const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../migrations")

export const databaseFileIn = (dataDir: string): string => join(dataDir, "planbridge.db")

/**
 * SQLite creates the database file with 0644 minus the umask, and its -wal/-shm (and -journal)
 * files with the database file's mode. So: a private directory, the database file created 0600
 * before SQLite opens it, and any leftover companion file of a looser mode tightened.
 */
export const preparePrivateDatabase = (filename: string, warn: Warn): void => {
  ensurePrivateDir(dirname(filename), warn)
  ensurePrivateFile(filename, warn, { create: true })
  for (const suffix of ["-wal", "-shm", "-journal"]) ensurePrivateFile(`${filename}${suffix}`, warn)
}

/**
 * The one SQLite connection of the process. better-sqlite3 is synchronous, so one connection
 * used from one thread is also the single writer: transactions never interleave. WAL lets
 * readers in other processes (the CLI beside a running server) see committed data.
 */
export class Database extends Context.Service<
  Database,
  {
    readonly db: Db
    readonly sqlite: BetterSqlite3.Database
    readonly filename: string
  }
>()("planbridge/Database") {
  static readonly make = (options: DatabaseOptions) =>
    Effect.acquireRelease(
      Effect.try({
        try: () => {
          if (options.filename !== ":memory:") preparePrivateDatabase(options.filename, options.warn ?? warnOnStderr)
          const sqlite = new BetterSqlite3(options.filename)
          sqlite.pragma("journal_mode = WAL")
          // NORMAL is durable across process crashes in WAL mode; only a power loss can drop the last commits.
          sqlite.pragma("synchronous = NORMAL")
          sqlite.pragma("busy_timeout = 5000")
          sqlite.pragma("foreign_keys = ON")
          const db = drizzle({ client: sqlite, schema })
          migrate(db, { migrationsFolder: MIGRATIONS_FOLDER })
          return { db, sqlite, filename: options.filename }
        },
        catch: (cause) => new DatabaseError({ message: `cannot open database ${options.filename}: ${String(cause)}` })
      }),
      ({ sqlite }) => Effect.sync(() => sqlite.close())
    )

  static readonly layer = (options: DatabaseOptions) => Layer.effect(Database, Database.make(options))
}
