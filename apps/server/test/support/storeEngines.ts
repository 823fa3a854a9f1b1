// The two store engines as the store-level tests see them: a fresh, empty store per call (a temp
// SQLite file, or a database of its own on a real PostgreSQL 15 started once per test file), run
// with ingestion as the server wires it, plus raw SQL and a projection dump for assertions.
import { Effect, Layer, type Scope } from "effect"
import { afterAll } from "vitest"
import pg from "pg"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"
import { dumpPgProjections } from "../../src/persistence/postgres/PgProjectionRebuild.ts"
import { postgresStore } from "../../src/persistence/postgres/PgStore.ts"
import { dumpProjections, type ProjectionDump } from "../../src/persistence/SqliteProjectionRebuild.ts"
import { sqliteStoreServices } from "../../src/persistence/SqliteStore.ts"
import type { StoreServices } from "../../src/persistence/StoreServices.ts"
import { tempDir } from "./ingestionRuntime.ts"
import { startPostgres, type TestPostgres } from "./postgres.ts"

export type EngineName = "sqlite" | "postgres"
type Provided = RuntimeIngestion | StoreServices | Scope.Scope

/** One store location; `run` opens the store on it (again and again, as restarts do). */
export interface StoreUnderTest {
  readonly engine: EngineName
  readonly run: <A, E>(effect: Effect.Effect<A, E, Provided>) => Promise<A>
  /** Raw SQL in both dialects' common subset; `?` placeholders. */
  readonly query: <R>(sql: string, params?: ReadonlyArray<unknown>) => Promise<Array<R>>
  readonly dump: () => Promise<ProjectionDump>
  /** The `--store` value for a server on it (undefined: SQLite in the data dir). */
  readonly storeUrl: string | undefined
}

let postgres: Promise<TestPostgres> | undefined
let databases = 0
const pools: Array<pg.Pool> = []
const cleanups: Array<() => void> = []
afterAll(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end().catch(() => undefined)))
  cleanups.splice(0).forEach((cleanup) => cleanup())
  const started = postgres
  postgres = undefined
  if (started !== undefined) (await started).stop()
})

const INT8 = 20
const numbers = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"]
}

/** `?` placeholders as PostgreSQL's `$1, $2, …` (the tests' SQL has no `?` inside literals). */
const numbered = (sql: string): string => {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

const sqliteStoreUnderTest = (): StoreUnderTest => {
  const t = tempDir("store")
  cleanups.push(t.cleanup)
  const filename = `${t.dir}/planbridge.db`
  const layer = () =>
    RuntimeIngestion.layer.pipe(
      Layer.provideMerge(sqliteStoreServices),
      Layer.provideMerge(Database.layer({ filename }))
    )
  const withDatabase = <A>(f: (database: Database["Service"]) => A) =>
    Effect.runPromise(Effect.scoped(Effect.map(Database.make({ filename }), f)))
  return {
    engine: "sqlite",
    run: (effect) => Effect.runPromise(Effect.scoped(Effect.provide(effect, layer()))),
    query: <R>(sql: string, params: ReadonlyArray<unknown> = []) =>
      withDatabase((d) => {
        const statement = d.sqlite.prepare(sql)
        if (statement.reader) return statement.all(...params) as Array<R>
        statement.run(...params)
        return []
      }),
    dump: () => withDatabase((d) => dumpProjections(d.db)),
    storeUrl: undefined
  }
}

const postgresStoreUnderTest = async (): Promise<StoreUnderTest> => {
  postgres ??= startPostgres()
  const cluster = await postgres
  const url = await cluster.createDatabase(`store_${process.pid}_${++databases}`)
  const pool = new pg.Pool({ connectionString: url, max: 2, types: numbers })
  pools.push(pool)
  const layer = () => RuntimeIngestion.layer.pipe(Layer.provideMerge(postgresStore({ url })))
  return {
    engine: "postgres",
    run: (effect) => Effect.runPromise(Effect.scoped(Effect.provide(effect, layer()))),
    query: async <R>(sql: string, params: ReadonlyArray<unknown> = []) =>
      (await pool.query(numbered(sql), [...params])).rows as Array<R>,
    dump: () => dumpPgProjections(pool),
    storeUrl: url
  }
}

/** A fresh, empty store of the engine. */
export const freshStore = (engine: EngineName): Promise<StoreUnderTest> =>
  engine === "sqlite" ? Promise.resolve(sqliteStoreUnderTest()) : postgresStoreUnderTest()

/** Both engines, for `describe.each`. */
export const ENGINES: ReadonlyArray<EngineName> = ["sqlite", "postgres"]
