import type { RuntimeEvent } from "@planbridge/contracts"
import type pg from "pg"
import type { ProjectionStatement, ProjectionStatementName, ProjectionStatements } from "../ProjectionStatements.ts"
import { literal } from "./PgLiteral.ts"
import { multiRowOf, type MultiRow } from "./PgMultiRow.ts"
import type { PgStatement } from "./PgStatement.ts"

/** What the projector reads during a batch, loaded by the append transaction before it projects. */
export interface ProjectionPreload {
  /** Threads that have a row. */
  readonly threads: ReadonlySet<string>
  /** The newest checklist revision by thread, then turn. */
  readonly revisions: ReadonlyMap<string, ReadonlyMap<string, number>>
}

const EMPTY: ProjectionPreload = { threads: new Set(), revisions: new Map() }

/**
 * The projector's statements over PostgreSQL. The projector (../Projector.ts) is synchronous
 * and the driver is not: its writes are queued in order and executed by `drain` inside the
 * append transaction, and its two reads are answered from what the transaction loaded before
 * the batch (`preload`), which under the append lock is what the database holds.
 */
export const makePgProjectionSink = (statements: Record<ProjectionStatementName, PgStatement>) => {
  let preload = EMPTY
  /** A queued write: its statement, its values bound, and its thread (every projection row is a thread's). */
  interface Queued {
    readonly statement: PgStatement
    readonly values: Array<unknown>
    readonly threadId: string | undefined
  }
  const queued: Array<Queued> = []
  /** The statements that have a many-row form (PgMultiRow.ts), by name. */
  const multiRows = new Map<string, MultiRow>()
  for (const statement of Object.values(statements)) {
    const multiRow = multiRowOf(statement)
    if (multiRow !== undefined) multiRows.set(statement.name, multiRow)
  }
  const writer = (statement: PgStatement): ProjectionStatement => ({
    run: (values) =>
      void queued.push({
        statement,
        values: statement.bind(values),
        threadId: typeof values.threadId === "string" ? values.threadId : undefined
      }),
    get: () => {
      throw new Error(`projection statement read while queued: ${statement.text}`)
    }
  })
  const sink = Object.fromEntries(
    Object.entries(statements).map(([name, statement]) => [name, writer(statement)])
  ) as Record<ProjectionStatementName, ProjectionStatement>
  sink.threadExists = {
    run: () => undefined,
    get: <R>(values: Record<string, unknown>) =>
      (preload.threads.has(String(values.threadId)) ? { thread_id: values.threadId } : undefined) as R | undefined
  }
  sink.lastRevision = {
    run: () => undefined,
    get: <R>(values: Record<string, unknown>) =>
      ({ revision: preload.revisions.get(String(values.threadId))?.get(String(values.turnId)) ?? null }) as R
  }

  return {
    statements: sink as ProjectionStatements,
    /** Sets what the reads answer for the next batch. */
    load: (loaded: ProjectionPreload): void => {
      preload = loaded
    },
    /** Executes the queued writes in order on the transaction's connection. */
    drain: async (client: pg.PoolClient): Promise<void> => {
      const writes = queued.splice(0)
      for (const { statement, values } of writes) {
        await client.query({ name: statement.name, text: statement.text, values })
      }
    },
    /**
     * The queued writes as SQL text for one multi-statement round trip (which takes no
     * parameters), the writes of one statement over several threads as one many-row statement
     * (PgMultiRow.ts) where it has that form, else each an `EXECUTE` of the statement prepared on
     * this connection, its values written in as literals, with the `PREPARE` first the first time
     * the connection runs it. A script that fails must cost its connection (the set would no
     * longer tell the truth). Order: each thread's writes keep their order (its n-th write goes
     * into the n-th round of statements), and a write of a statement without a many-row form
     * stays where it was among all the others; writes of different threads touch different rows,
     * so their order between each other does not matter.
     */
    scriptWrites: (prepared: Set<string>): Array<string> => {
      const script: Array<string> = []
      const execute = ({ statement, values }: Queued) => {
        // Its own name: node-postgres's named statements (`statement.name`) share the namespace.
        const name = `s${statement.name}`
        if (!prepared.has(name)) {
          prepared.add(name)
          script.push(`prepare ${name} as ${statement.text}`)
        }
        script.push(`execute ${name}(${values.map(literal).join(", ")})`)
      }
      let run: Array<Queued> = []
      const flushRun = () => {
        const rounds = new Map<string, number>()
        const groups = new Map<string, { round: number; writes: Array<Queued> }>()
        for (const write of run) {
          const round = rounds.get(write.threadId!) ?? 0
          rounds.set(write.threadId!, round + 1)
          const key = `${round}\u0000${write.statement.name}\u0000${multiRows.get(write.statement.name)!.groupOf(write.values)}`
          const group = groups.get(key) ?? groups.set(key, { round, writes: [] }).get(key)!
          group.writes.push(write)
        }
        for (const { writes } of [...groups.values()].sort((a, b) => a.round - b.round)) {
          if (writes.length === 1) execute(writes[0]!)
          else script.push(multiRows.get(writes[0]!.statement.name)!.sql(writes.map((w) => w.values)))
        }
        run = []
      }
      for (const write of queued.splice(0)) {
        if (write.threadId !== undefined && multiRows.has(write.statement.name)) run.push(write)
        else {
          flushRun()
          execute(write)
        }
      }
      flushRun()
      return script
    },
    /** Forgets queued writes (a failed transaction). */
    clear: (): void => {
      queued.length = 0
      preload = EMPTY
    }
  }
}

export type PgProjectionSink = ReturnType<typeof makePgProjectionSink>

/** Loads what the projector reads for a batch of events (inside its transaction, after the append lock). */
export const loadProjectionReads = async (
  client: pg.PoolClient,
  batch: ReadonlyArray<RuntimeEvent>
): Promise<ProjectionPreload> => {
  const threadIds = [...new Set(batch.map((e) => e.threadId))]
  const planThreads = [...new Set(batch.filter((e) => e.type === "turn.plan.updated").map((e) => e.threadId))]
  const threads = await client.query<{ threadId: string }>(
    `select thread_id as "threadId" from threads where thread_id = any($1::text[])`,
    [threadIds]
  )
  const revisions =
    planThreads.length === 0
      ? []
      : (
          await client.query<{ threadId: string; turnId: string; revision: number }>(
            `select thread_id as "threadId", turn_id as "turnId", max(revision) as revision from plan_snapshots
             where thread_id = any($1::text[]) group by thread_id, turn_id`,
            [planThreads]
          )
        ).rows
  const byThread = new Map<string, Map<string, number>>()
  for (const r of revisions) {
    const turns = byThread.get(r.threadId) ?? byThread.set(r.threadId, new Map()).get(r.threadId)!
    turns.set(r.turnId, r.revision)
  }
  return { threads: new Set(threads.rows.map((t) => t.threadId)), revisions: byThread }
}
