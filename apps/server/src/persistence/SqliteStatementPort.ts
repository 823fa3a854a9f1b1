import { sql } from "drizzle-orm"
import { Effect, Exit, Layer } from "effect"
import { Database, type Db } from "./Database.ts"
import { itemText } from "./ItemText.ts"
import { catchUpProjections } from "./ProjectionLag.ts"
import * as schema from "./schema.ts"
import { attempt, RolledBack, StatementPort, type StatementPortShape } from "./StatementPort.ts"

/**
 * The statement port on the one SQLite connection: each statement runs synchronously where the
 * effect runs, and a transaction's body (statements only, so it completes synchronously) inside
 * better-sqlite3's own transaction, so that no other work interleaves with it. Every statement
 * first brings the lagging projections up to the log (ProjectionLag.ts): what it reads or writes
 * is as of every committed event.
 */
export const sqliteStatementPortOf = (db: Db): StatementPortShape => {
  const port: StatementPortShape = {
    db,
    tables: schema,
    rows: (query) =>
      attempt(() => {
        catchUpProjections(db)
        return query.all()
      }),
    run: (query) =>
      attempt(() => {
        catchUpProjections(db)
        return query.run().changes
      }),
    transaction: <A, E>(body: (tx: StatementPortShape) => Effect.Effect<A, E>) =>
      Effect.flatten(
        attempt(() => {
          catchUpProjections(db)
          try {
            return db.$client.transaction(() => {
              const exit = Effect.runSyncExit(body(port))
              if (Exit.isFailure(exit)) throw new RolledBack({ exit })
              return exit
            })()
          } catch (error) {
            if (error instanceof RolledBack) return error.exit as Exit.Exit<A, E>
            throw error
          }
        })
      ),
    dialect: {
      itemText,
      contains: (column, text) => sql<boolean>`instr(${column}, ${text}) > 0`
    }
  }
  return port
}

/** `StatementPort` over the open SQLite `Database`. */
export const sqliteStatementPort = Layer.effect(
  StatementPort,
  Effect.gen(function* () {
    const { db } = yield* Database
    return StatementPort.of(sqliteStatementPortOf(db))
  })
)
