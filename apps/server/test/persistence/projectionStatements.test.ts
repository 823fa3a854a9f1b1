// The projector's statements are defined once (ProjectionQueries.ts) and built by each engine's
// drizzle dialect over its own schema. What must hold for that: every statement is valid
// PostgreSQL (the definition is typed against SQLite's builders), and both engines bind the same
// named values in the same places, the flags as each engine stores them.
import { is, Param, Placeholder } from "drizzle-orm"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Database } from "../../src/persistence/Database.ts"
import { PgDatabase } from "../../src/persistence/postgres/PgDatabase.ts"
import { pgProjectionQueries } from "../../src/persistence/postgres/PgProjectionStatements.ts"
import { projectionQueries } from "../../src/persistence/ProjectionQueries.ts"
import * as sqliteSchema from "../../src/persistence/schema.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

/** The flags the projector binds as 1/0. */
const FLAGS = new Set([":completed", ":hasItem", ":replaceText", ":isLatest", ":blocking"])

/** What a statement binds at each position: `:name` for a placeholder, or a constant as the driver gets it. */
const bindings = (built: { params: Array<unknown> }): Array<unknown> =>
  built.params.map((param) => {
    if (is(param, Placeholder)) return `:${String(param.name)}`
    if (!is(param, Param)) return param
    if (is(param.value, Placeholder)) return `:${String(param.value.name)}`
    return param.encoder === undefined ? param.value : param.encoder.mapToDriverValue(param.value)
  })

/** Both engines' statements as their drizzle dialects build them, on a fresh database of each. */
const bothEngines = Effect.gen(function* () {
  const sqlite = yield* Database.make({ filename: ":memory:" })
  const url = yield* Effect.promise(() => postgres.createDatabase(`statements_${Date.now()}`))
  const pgDatabase = yield* PgDatabase.make({ url })
  return {
    sqlite: projectionQueries(sqlite.db, sqliteSchema),
    pg: pgProjectionQueries(pgDatabase.db),
    pool: pgDatabase.pool
  }
})

describe("the projector's statements, one definition for both engines", () => {
  it("every statement is valid PostgreSQL 15: each prepares, its flags typed boolean by their context", async () => {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { pg, pool } = yield* bothEngines
          const client = yield* Effect.acquireRelease(
            Effect.promise(() => pool.connect()),
            (c) => Effect.sync(() => c.release())
          )
          for (const [name, query] of Object.entries(pg)) {
            const built = query.toSQL()
            const failure = yield* Effect.promise(() =>
              client.query(`prepare check_${name} as ${built.sql}`).then(
                () => undefined,
                (error: Error) => error.message
              )
            )
            expect(failure, `${name}: ${built.sql}`).toBeUndefined()
            const { rows } = yield* Effect.promise(() =>
              client.query<{ types: Array<string> }>(
                "select parameter_types::text[] as types from pg_prepared_statements where name = $1",
                [`check_${name.toLowerCase()}`]
              )
            )
            const params = bindings(built)
            expect(rows[0]?.types, name).toHaveLength(params.length)
            params.forEach((param, i) => {
              if (typeof param === "string" && FLAGS.has(param))
                expect(rows[0]!.types[i], `${name} ${param}`).toBe("boolean")
            })
          }
        })
      )
    )
  }, 120_000)

  it("each statement binds the same named values in the same places on both engines, a constant flag 1/0 on SQLite and a boolean on PostgreSQL", async () => {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { sqlite, pg } = yield* bothEngines
          expect(Object.keys(pg)).toEqual(Object.keys(sqlite))
          let flagConstants = 0
          for (const [name, query] of Object.entries(sqlite)) {
            const onSqlite = bindings(query.toSQL())
            const onPg = bindings(pg[name as keyof typeof pg].toSQL())
            expect(onPg, name).toHaveLength(onSqlite.length)
            onSqlite.forEach((binding, i) => {
              const pgBinding = onPg[i]
              if (typeof pgBinding === "boolean") {
                flagConstants++
                expect(binding, `${name} #${i}`).toBe(pgBinding ? 1 : 0)
              } else expect(pgBinding, `${name} #${i}`).toBe(binding)
            })
          }
          // unmarkLatest's `set is_latest = false … where is_latest = true`, PostgreSQL's own encoding.
          expect(flagConstants).toBe(2)
        })
      )
    )
  }, 120_000)
})
