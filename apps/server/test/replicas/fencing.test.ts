// Issue 31, item 1: a replica that lost a thread's lease never appends to it again. Two
// `planbridge serve` replicas on one real PostgreSQL 15 (started by the test), each owning a
// Cursor session (the scripted agent) that streams chunks under an open question; then either
// PostgreSQL (its postmaster and every backend) or the owner replica's own process is paused
// (SIGSTOP, by pid) for longer than the lease, and resumed. The leases expire, a replica takes
// the threads over (`session.exited server_restarted`), and the log must hold nothing of the
// thread after that take-over, and no prompt or request resolved twice.
import { readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  cursorServeEnv,
  processesCarrying,
  recordedGroupTokens,
  sleep,
  startServe,
  stopServe,
  tempDir,
  cleanup,
  type ServeProcess
} from "../chaos/rig.ts"
import { connectLite, type LiteClient } from "../chaos/wsLite.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { makeReplicaDir } from "../support/replicaDir.ts"

const LEASE_TTL_MS = 1_500
/** Each pause outlasts the lease well: renewals come every third of it. */
const PAUSE_MS = Math.round(LEASE_TTL_MS * 2.5)
/** Cycles of each kind (PLANBRIDGE_FENCE_CYCLES for the stress run). */
const CYCLES = Number(process.env.PLANBRIDGE_FENCE_CYCLES ?? 2)
const TOKEN = "fencing-token-".padEnd(40, "f")

let postgres: TestPostgres
let database: pg.Client
const replicas: Array<ServeProcess> = []
const dataDirs: Array<string> = []

const replicaDir = (): string => {
  const dir = makeReplicaDir(TOKEN, "planbridge-fence-")
  dataDirs.push(dir)
  return dir
}

beforeAll(async () => {
  assertLoopbackOnly()
  postgres = await startPostgres()
  const url = await postgres.createDatabase("fencing")
  const env = await cursorServeEnv({ PLANBRIDGE_STORE: url, PLANBRIDGE_LEASE_TTL_MS: String(LEASE_TTL_MS) })
  for (let i = 0; i < 2; i++) replicas.push(await startServe({ dataDir: replicaDir(), env, startTimeoutMs: 60_000 }))
  database = new pg.Client({ connectionString: url })
  await database.connect()
}, 120_000)

afterAll(async () => {
  await database?.end().catch(() => undefined)
  await Promise.all(replicas.map((r) => stopServe(r)))
  for (const dir of dataDirs)
    for (const pid of processesCarrying(new Set(recordedGroupTokens(dir)))) process.kill(pid, "SIGKILL")
  postgres?.stop()
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  cleanup()
})

/** The postmaster and every process it started (the backends), by /proc. */
const postgresPids = (): Array<number> => {
  const postmaster = Number(readFileSync(join(postgres.dataDir, "postmaster.pid"), "utf8").split("\n")[0])
  const pids = [postmaster]
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8")
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (parent === postmaster) pids.push(Number(name))
    } catch {
      // Gone meanwhile.
    }
  }
  return pids
}

/** A signal to a process that may have exited meanwhile (a backend that was ending, reaped once its postmaster runs again). */
const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error
  }
}

const pause = async (pids: ReadonlyArray<number>, ms: number) => {
  for (const pid of pids) signal(pid, "SIGSTOP")
  await sleep(ms)
  for (const pid of pids) signal(pid, "SIGCONT")
}

interface Row {
  readonly thread_seq: number
  readonly event_id: string
  readonly type: string
  readonly resolved: string | null
}
const logOf = async (threadId: string): Promise<ReadonlyArray<Row>> =>
  (
    await database.query<Row>(
      `select thread_seq::int, event_id, event::json->>'type' as type,
         coalesce(event::json->'payload'->>'promptId', event::json->'payload'->>'requestId') as resolved
       from events where thread_id = $1 order by thread_seq`,
      [threadId]
    )
  ).rows

/** The thread's take-over (a recovery's `session.exited`), and what the log holds after it. */
const afterTakeOver = (log: ReadonlyArray<Row>) => {
  const takeOver = log.findIndex((r) => r.type === "session.exited" && r.event_id.startsWith("planbridge-recovery:"))
  return takeOver < 0 ? undefined : log.slice(takeOver + 1)
}

const resolvedTwice = (log: ReadonlyArray<Row>): number => {
  const counts = new Map<string, number>()
  for (const row of log)
    if ((row.type === "user-input.resolved" || row.type === "request.resolved") && row.resolved !== null)
      counts.set(row.resolved, (counts.get(row.resolved) ?? 0) + 1)
  return [...counts.values()].filter((n) => n > 1).length
}

/** A session on `server`, streaming under an open question; resolves once both are in the log. */
const streamingSession = async (server: ServeProcess, client: LiteClient): Promise<string> => {
  const cwd = tempDir("planbridge-fence-cwd-")
  const { threadId } = (await client.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })) as {
    threadId: string
  }
  await client.command({
    type: "turn.start",
    threadId: threadId as never,
    text: "SCENARIO:PACED_ASK count=1000000 rate=250"
  })
  const deadline = Date.now() + 20_000
  for (;;) {
    const log = await logOf(threadId)
    if (log.some((r) => r.type === "user-input.requested") && log.filter((r) => r.type === "content.delta").length > 20)
      return threadId
    if (Date.now() > deadline) throw new Error(`no stream on ${server.url}: ${log.length} events`)
    await sleep(50)
  }
}

interface CycleFigures {
  appendedAfterTakeOver: number
  resolvedTwice: number
  withoutTakeOver: number
  eventsChecked: number
}

/** Waits until every thread was taken over and the log has stood still; counts what follows the take-over. */
const settle = async (threadIds: ReadonlyArray<string>, figures: CycleFigures, what: string) => {
  const deadline = Date.now() + 30_000
  let lengths = ""
  let still = 0
  for (;;) {
    const logs = await Promise.all(threadIds.map(logOf))
    const now = logs.map((l) => l.length).join(",")
    still = now === lengths ? still + 1 : 0
    lengths = now
    const allTakenOver = logs.every((l) => afterTakeOver(l) !== undefined)
    // Still for two lease times: the old owner has renewed (and lost) several times by then.
    if ((allTakenOver && still * 250 >= 2 * LEASE_TTL_MS) || Date.now() > deadline) {
      for (const log of logs) {
        const after = afterTakeOver(log)
        if (after === undefined) {
          figures.withoutTakeOver += 1
          const leases = await database.query("select *, clock_timestamp() as now from session_leases")
          console.warn(
            `${what}: no take-over; the log ends ${JSON.stringify(log.slice(-3))}; leases ${JSON.stringify(leases.rows)}; ` +
              replicas.map((r, i) => `replica ${i}: ${r.stderr().slice(-3000)}`).join("\n")
          )
        } else {
          figures.appendedAfterTakeOver += after.length
          if (after.length > 0) console.warn(`${what}: after the take-over ${JSON.stringify(after.slice(0, 6))}`)
        }
        figures.resolvedTwice += resolvedTwice(log)
        figures.eventsChecked += log.length
      }
      return
    }
    await sleep(250)
  }
}

describe("fencing: pauses longer than the lease, two replicas on a real PostgreSQL", { timeout: 600_000 }, () => {
  it(`PostgreSQL paused ${PAUSE_MS} ms, then the owner replica paused ${PAUSE_MS} ms (lease ${LEASE_TTL_MS} ms), ${CYCLES} cycles each: nothing appended after a take-over, nothing resolved twice`, async () => {
    const clients = await Promise.all(replicas.map((r) => connectLite(r.url, r.token)))
    const figures = {
      database: { appendedAfterTakeOver: 0, resolvedTwice: 0, withoutTakeOver: 0, eventsChecked: 0 },
      owner: { appendedAfterTakeOver: 0, resolvedTwice: 0, withoutTakeOver: 0, eventsChecked: 0 }
    }
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        // The database paused: both replicas lose both leases; either may take either thread over.
        const threads = [
          await streamingSession(replicas[0]!, clients[0]!),
          await streamingSession(replicas[1]!, clients[1]!)
        ]
        await pause(postgresPids(), PAUSE_MS)
        await settle(threads, figures.database, `database cycle ${cycle}`)
        // The owner paused: the other replica takes its thread over while it cannot see anything.
        const owned = await streamingSession(replicas[0]!, clients[0]!)
        await pause([replicas[0]!.pid], PAUSE_MS)
        await settle([owned], figures.owner, `owner cycle ${cycle}`)
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()))
    }
    console.info(`fencing: ${JSON.stringify(figures)}`)
    expect(replicas.every((r) => r.child.exitCode === null && r.child.signalCode === null)).toBe(true)
    for (const kind of [figures.database, figures.owner]) {
      expect(kind.withoutTakeOver).toBe(0)
      expect(kind.eventsChecked).toBeGreaterThan(0)
      expect(kind.appendedAfterTakeOver).toBe(0)
      expect(kind.resolvedTwice).toBe(0)
    }
  })
})
