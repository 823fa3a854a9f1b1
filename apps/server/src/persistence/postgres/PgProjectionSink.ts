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
  /** The thread of the event being projected (`forThread`), for writes whose values do not name it. */
  let projecting: string | undefined
  const writer = (statement: PgStatement): ProjectionStatement => ({
    run: (values) =>
      void queued.push({
        statement,
        values: statement.bind(values),
        threadId: typeof values.threadId === "string" ? values.threadId : projecting
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
    /**
     * Projects one event of `threadId`: the writes it queues are that thread's (an event's
     * projection writes its own thread's rows only: a request or prompt it resolves is its
     * thread's, their ids are namespaced by the provider's session), also those whose values do
     * not name the thread (a resolution, by request or prompt id).
     */
    forThread: <A>(threadId: string, project: () => A): A => {
      projecting = threadId
      try {
        return project()
      } finally {
        projecting = undefined
      }
    },
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
     * parameters): writes of one statement over several threads as one many-row statement
     * (PgMultiRow.ts) where it has that form, else each an `EXECUTE` of the statement prepared on
     * this connection, its values written in as literals, with the `PREPARE` first the first time
     * the connection runs it. A script that fails must cost its connection (the set would no
     * longer tell the truth). Order: each thread's writes keep their order; writes of different
     * threads touch different rows, so their order between each other does not matter, and a
     * write of no thread (none so far) stays where it was among all the others. Between two such
     * writes, the threads' queues are merged greedily: each step takes the kind of write (statement
     * and group) at the head of the most threads' queues, one write from each of those threads.
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
      /** Each thread's writes since the last write of no thread, in order, each with its kind. */
      let queues = new Map<string, Array<{ readonly write: Queued; readonly kind: string }>>()
      const kindOf = (write: Queued): string => {
        const multiRow = multiRows.get(write.statement.name)
        return multiRow === undefined
          ? write.statement.name
          : `${write.statement.name}\u0000${multiRow.groupOf(write.values)}`
      }
      const flushQueues = () => {
        const heads = new Map<string, number>()
        for (;;) {
          const byKind = new Map<string, Array<string>>()
          for (const [threadId, queue] of queues) {
            const head = queue[heads.get(threadId) ?? 0]
            if (head === undefined) continue
            const threads = byKind.get(head.kind) ?? byKind.set(head.kind, []).get(head.kind)!
            threads.push(threadId)
          }
          let chosen: Array<string> | undefined
          for (const threads of byKind.values())
            if (chosen === undefined || threads.length > chosen.length) chosen = threads
          if (chosen === undefined) break
          const writes = chosen.map((threadId) => {
            const at = heads.get(threadId) ?? 0
            heads.set(threadId, at + 1)
            return queues.get(threadId)![at]!.write
          })
          const multiRow = multiRows.get(writes[0]!.statement.name)
          if (writes.length === 1 || multiRow === undefined) writes.forEach(execute)
          else script.push(multiRow.sql(writes.map((w) => w.values)))
        }
        queues = new Map()
      }
      for (const write of queued.splice(0)) {
        if (write.threadId === undefined) {
          flushQueues()
          execute(write)
        } else {
          const queue = queues.get(write.threadId) ?? queues.set(write.threadId, []).get(write.threadId)!
          queue.push({ write, kind: kindOf(write) })
        }
      }
      flushQueues()
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
