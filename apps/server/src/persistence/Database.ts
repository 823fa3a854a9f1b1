import BetterSqlite3 from "better-sqlite3"
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import { migrate } from "drizzle-orm/better-sqlite3/migrator"
import { Context, Effect, Layer, Schema } from "effect"
import { mkdirSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as schema from "./schema.ts"

export type Db = BetterSQLite3Database<typeof schema> & { readonly $client: BetterSqlite3.Database }

export class DatabaseError extends Schema.TaggedError<DatabaseError>()("DatabaseError", {
  message: Schema.String
}) {}

export interface DatabaseOptions {
  /** A file path, or ":memory:" for throw-away databases. */
  readonly filename: string
}

/** Migrations ship with the repository and are applied at every start-up. */
export const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../migrations")

export const databaseFileIn = (dataDir: string): string => join(dataDir, "planbridge.db")

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
          if (options.filename !== ":memory:") mkdirSync(dirname(options.filename), { recursive: true })
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
