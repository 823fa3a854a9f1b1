import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"

export interface RebuildReport {
  readonly events: number
  /** Tables whose rebuilt rows differ from what was there before. */
  readonly differences: ReadonlyArray<{
    readonly table: string
    readonly before: number
    readonly after: number
    readonly changedRows: number
  }>
}

/**
 * Every projection is a function of the event log: this drops them and replays the log (in one
 * transaction), reporting how the result differs from what was there. With `dryRun` nothing
 * changes. `planbridge rebuild` runs it while the server is stopped.
 */
export class ProjectionRebuild extends Context.Service<
  ProjectionRebuild,
  {
    readonly rebuild: (options: { readonly dryRun: boolean }) => Effect.Effect<RebuildReport, StoreError>
  }
>()("planbridge/ProjectionRebuild") {}
