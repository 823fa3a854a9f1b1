import { Effect, Layer } from "effect"
import { makeProviderStates, ProviderStates } from "../ProviderStates.ts"
import { providerStateQueries, type ProviderStateTable, type StoredProviderState } from "../ProviderStateQueries.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { preparePg } from "./PgStatement.ts"
import { pgStatementBuilder } from "./PgStatementBuilder.ts"
import * as schema from "./schema.ts"

/**
 * ProviderStates on PostgreSQL: the shared statements (../ProviderStateQueries.ts) built over
 * PostgreSQL's table, seen through SQLite's type as the projector's are (PgStatementBuilder.ts;
 * the two tables have the same columns and value types), run on the pool.
 */
export const pgProviderStates = (token: string) =>
  Layer.effect(
    ProviderStates,
    Effect.gen(function* () {
      const { db, pool } = yield* PgDatabase
      const table = schema.providerStates as unknown as ProviderStateTable
      const queries = providerStateQueries(pgStatementBuilder(db).db, table)
      const save = preparePg(queries.save)
      const load = preparePg(queries.load)
      return makeProviderStates(
        {
          save: async (values) => void (await save.rows(pool, values)),
          load: async (values) => (await load.rows<StoredProviderState>(pool, values))[0]
        },
        token
      )
    })
  )
