import type { Db } from "./Database.ts"
import type * as schema from "./schema.ts"

/**
 * The tables the statements both engines share are written against, typed as SQLite's schema
 * (PostgreSQL's twins are seen through these types: postgres/PgStatementBuilder.ts).
 */
export type StatementTables = Pick<
  typeof schema,
  "threads" | "turns" | "items" | "itemTextChunks" | "planSnapshots" | "proposedPlans" | "requests" | "prompts"
>

/** The part of a drizzle database shared statements are built with (nothing is executed through it). */
export type StatementBuilder = Pick<Db, "select" | "insert" | "update" | "delete">
