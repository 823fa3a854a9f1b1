import { eq, sql } from "drizzle-orm"
import type * as schema from "./schema.ts"
import type { StatementBuilder } from "./StatementBuilder.ts"

const p = sql.placeholder

/** The table the provider-state statements are written against, typed as SQLite's (PostgreSQL's is seen through it). */
export type ProviderStateTable = (typeof schema)["providerStates"]

/**
 * The statements of ProviderStates.ts, defined once for both engines as ProjectionQueries.ts
 * defines the projector's: each engine prepares what its dialect renders. A capture replaces the
 * stored one unless that was taken under a newer lease (`fence`): a replica that lost a thread's
 * lease, and captures as its session ends, cannot overwrite what the new owner captured.
 */
export const providerStateQueries = (db: StatementBuilder, t: ProviderStateTable) => ({
  save: db
    .insert(t)
    .values({
      threadId: p("threadId"),
      provider: p("provider"),
      sealed: p("sealed"),
      bytes: p("bytes"),
      fence: p("fence"),
      capturedAt: p("capturedAt")
    })
    .onConflictDoUpdate({
      target: t.threadId,
      set: {
        provider: sql`excluded.provider`,
        sealed: sql`excluded.sealed`,
        bytes: sql`excluded.bytes`,
        fence: sql`excluded.fence`,
        capturedAt: sql`excluded.captured_at`
      },
      setWhere: sql`excluded.fence >= ${t.fence}`
    }),
  load: db
    .select({ provider: t.provider, sealed: t.sealed })
    .from(t)
    .where(eq(t.threadId, p("threadId")))
})

/** One stored row as the load statement reads it. */
export interface StoredProviderState {
  readonly provider: string
  readonly sealed: string
}

/** How an engine runs the two statements (SQLite on its connection, PostgreSQL on its pool). */
export interface ProviderStateRows {
  readonly save: (values: Record<string, unknown>) => Promise<void>
  readonly load: (values: Record<string, unknown>) => Promise<StoredProviderState | undefined>
}
