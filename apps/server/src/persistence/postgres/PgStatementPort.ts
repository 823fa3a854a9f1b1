import { sql } from "drizzle-orm"
import { Effect, Exit, Layer } from "effect"
import type { StatementBuilder } from "../StatementBuilder.ts"
import {
  RolledBack,
  StatementFailure,
  StatementPort,
  type PortTables,
  type RowsQuery,
  type StatementPortShape,
  type WriteQuery
} from "../StatementPort.ts"
import { PgDatabase, type PgDb } from "./PgDatabase.ts"
import { pgItemText } from "./PgItemText.ts"
import { pgStatementBuilder } from "./PgStatementBuilder.ts"
import * as schema from "./schema.ts"

/** Whether two types are the same (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Rows = { $inferInsert: unknown; $inferSelect: unknown }
type SameRows<A extends Rows, B extends Rows> =
  Same<A["$inferInsert"], B["$inferInsert"]> extends true ? Same<A["$inferSelect"], B["$inferSelect"]> : false

/**
 * Checked by the compiler: the tables the port adds to PgStatementBuilder.ts's have the same rows
 * on both engines, as that file checks for its own.
 */
const sameRows: {
  [K in Exclude<keyof PortTables, keyof ReturnType<typeof pgStatementBuilder>["tables"]>]: SameRows<
    PortTables[K],
    (typeof schema)[K]
  >
} = {
  events: true,
  clientRequests: true,
  archivedThreads: true,
  notificationSinks: true,
  notificationOutbox: true,
  notificationAttempts: true
}
void sameRows

/** A drizzle database or one of its transactions: what the port's statements are built and run on. */
type PgRunner = Pick<PgDb, "select" | "insert" | "update" | "delete" | "transaction">

/** A query built on PostgreSQL's builders, whatever SQLite's types say of it: a promise of its result. */
const awaited = <R>(query: RowsQuery<unknown> | WriteQuery) => query as unknown as PromiseLike<R>

/**
 * The statement port on the PostgreSQL pool (or one transaction's connection): each statement
 * awaited, a transaction on one connection of the pool. The statements are built on PostgreSQL's
 * builders seen through SQLite's types, as PgStatementBuilder.ts explains.
 */
export const pgStatementPortOf = (db: PgRunner): StatementPortShape => {
  const port: StatementPortShape = {
    db: db as unknown as StatementBuilder,
    tables: schema as unknown as PortTables,
    rows: <R>(query: RowsQuery<R>) =>
      Effect.tryPromise({
        try: async () => await awaited<Array<R>>(query),
        catch: (cause) => new StatementFailure({ cause })
      }),
    run: (query) =>
      Effect.tryPromise({
        try: async () => (await awaited<{ readonly rowCount: number | null }>(query)).rowCount ?? 0,
        catch: (cause) => new StatementFailure({ cause })
      }),
    transaction: <A, E>(body: (tx: StatementPortShape) => Effect.Effect<A, E>) =>
      Effect.flatten(
        Effect.tryPromise({
          try: () =>
            db
              .transaction(async (tx) => {
                const exit = await Effect.runPromiseExit(body(pgStatementPortOf(tx)))
                if (Exit.isFailure(exit)) throw new RolledBack({ exit })
                return exit
              })
              .catch((error: unknown) => {
                if (error instanceof RolledBack) return error.exit as Exit.Exit<A, E>
                throw error
              }),
          catch: (cause) => new StatementFailure({ cause })
        })
      ),
    dialect: {
      itemText: pgItemText,
      contains: (column, text) => sql<boolean>`strpos(${column}, ${text}) > 0`
    }
  }
  return port
}

/** `StatementPort` over the PostgreSQL pool. */
export const pgStatementPort = Layer.effect(
  StatementPort,
  Effect.gen(function* () {
    const { db } = yield* PgDatabase
    return StatementPort.of(pgStatementPortOf(db))
  })
)
