import type { SQL, SQLWrapper } from "drizzle-orm"
import { Context, Data, Effect, type Exit } from "effect"
import type { StatementBuilder, StatementTables } from "./StatementBuilder.ts"
import type * as schema from "./schema.ts"
import { storeFailure, type StoreError, type StoreFailure } from "./StoreError.ts"

/**
 * The tables the services written once (PortTables' users) read and write, typed as SQLite's
 * schema; PostgreSQL's are checked to have the same rows (postgres/PgStatementPort.ts).
 */
export type PortTables = StatementTables &
  Pick<
    typeof schema,
    | "events"
    | "clientRequests"
    | "archivedThreads"
    | "notificationSinks"
    | "notificationOutbox"
    | "notificationAttempts"
  >

/** What an engine call threw, kept as it was until a service says what it was doing (`failsAs`). */
export class StatementFailure extends Data.TaggedError("StatementFailure")<{ readonly cause: unknown }> {}

/** A drizzle query that answers rows (a select), as SQLite's builders type it. */
export interface RowsQuery<R> {
  readonly all: () => Array<R>
}

/** A drizzle write (insert, update, delete), as SQLite's builders type it. */
export interface WriteQuery {
  readonly run: () => { readonly changes: number }
}

/**
 * One port over which the store services that both engines answer alike are written once
 * (AnswerTargetQueries.ts, ClientRequestQueries.ts, …): the statements are built with drizzle
 * from `db` and `tables`, and each engine runs what its dialect renders. SQLite runs a statement
 * on the spot (`Effect.try` around the synchronous call: SqliteStatementPort.ts), PostgreSQL
 * awaits it on the pool (postgres/PgStatementPort.ts). Only the port runs a query: a statement
 * built here is never `.all()`-ed or awaited by its caller, whose engine it does not know.
 */
export interface StatementPortShape {
  readonly db: StatementBuilder
  readonly tables: PortTables
  /** The rows a select answers. */
  readonly rows: <R>(query: RowsQuery<R>) => Effect.Effect<Array<R>, StatementFailure>
  /** Runs a write; answers how many rows it changed. */
  readonly run: (query: WriteQuery) => Effect.Effect<number, StatementFailure>
  /**
   * Runs `body` in one transaction, its statements on the port it is given: committed when it
   * succeeds, rolled back when it fails (SQLite: synchronously, so nothing interleaves; PostgreSQL:
   * on one connection of the pool).
   */
  readonly transaction: <A, E>(
    body: (tx: StatementPortShape) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | StatementFailure>
  /** The few expressions the dialects spell apart. */
  readonly dialect: {
    /** An item's whole text (ItemText.ts, postgres/PgItemText.ts). */
    readonly itemText: SQL<string>
    /** Whether `column`'s text contains `text` (SQLite `instr`, PostgreSQL `strpos`). */
    readonly contains: (column: SQLWrapper, text: string) => SQL<boolean>
  }
}

export class StatementPort extends Context.Service<StatementPort, StatementPortShape>()("planbridge/StatementPort") {}

/** Thrown inside an engine's transaction to roll it back when its body failed; carries the body's outcome. */
export class RolledBack<A, E> extends Data.TaggedError("RolledBack")<{ readonly exit: Exit.Exit<A, E> }> {}

/** A synchronous step (decoding a row) as part of a port's work: what it throws is a failure of it. */
export const attempt = <A>(f: () => A): Effect.Effect<A, StatementFailure> =>
  Effect.try({ try: f, catch: (cause) => new StatementFailure({ cause }) })

/** The first row of a select, or undefined. */
export const firstRow = <R>(
  port: StatementPortShape,
  query: RowsQuery<R>
): Effect.Effect<R | undefined, StatementFailure> => Effect.map(port.rows(query), (rows) => rows[0])

/** A service's work as a `StoreError`: what it was doing, and the engine's own message (`storeFailure`). */
export const failsAs =
  (reason: StoreFailure, doing: string) =>
  <A>(work: Effect.Effect<A, StatementFailure>): Effect.Effect<A, StoreError> =>
    Effect.mapError(work, (failure) => storeFailure(reason, doing)(failure.cause))
