import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Exit, Layer, Schema } from "effect"
import { adapterFailure, type AdapterError } from "./AdapterError.ts"
import { startWatchdog, type Watchdog } from "./kernel/groupWatchdog.ts"
import { allPids, carriesToken, readBootId, readProcStat, signalGroup, type ProcStat } from "./kernel/procfs.ts"

export { WATCHDOG_NAME } from "./kernel/groupWatchdog.ts"
export { GROUP_TOKEN_ENV, groupHasLiveMembers, readProcStat, type ProcStat } from "./kernel/procfs.ts"

/**
 * Provider process groups must not outlive the server. Every provider child runs in its own
 * process group (pid = pgid) under a parent-death signal (kernel/ProviderProcess.ts), which reaches only
 * that child: the tools it started live on in its group. So the server's `ProcessGroups`
 * records every group in the data dir before its session is reported started, and
 *  - a watchdog (a small shell whose stdin is a pipe from the server) kills the recorded groups
 *    the moment that pipe closes, i.e. when the server dies, whatever killed it;
 *  - start-up recovery kills the groups a run that is over left behind (the watchdog died too),
 *    only once it has proved that a group is the recorded one (`endLeftover`), never by name.
 * Without a data dir (test harnesses) nothing is recorded: the default is `unrecorded`.
 */

/** A group being tracked; `release` forgets it once it is reaped (idempotent). */
export interface TrackedGroup {
  readonly release: Effect.Effect<void>
}

export interface LeftoverReport {
  /** Groups of earlier runs that were still running, proved theirs, and killed. */
  readonly ended: number
  /** Recorded groups left alone: their pid now belongs to someone else, or nothing proved them ours. */
  readonly spared: number
}

export interface ProcessGroupsService {
  /**
   * Records the group of a provider process that has just been spawned (its pid is the pgid)
   * with the token in its environment, durably, before anything is reported about its session.
   */
  readonly track: (group: {
    readonly pid: number
    readonly token: string
    readonly command: string
  }) => Effect.Effect<TrackedGroup, AdapterError>
  /** Ends the groups recorded by runs that are over (identity-checked) and deletes their records. */
  readonly recoverLeftovers: Effect.Effect<LeftoverReport>
}

const untracked: TrackedGroup = { release: Effect.void }

/** No data dir, no records: provider groups still get their parent-death signal. */
export const unrecorded: ProcessGroupsService = {
  track: () => Effect.succeed(untracked),
  recoverLeftovers: Effect.succeed({ ended: 0, spared: 0 })
}

// ---- the records ----------------------------------------------------------------------------

export const RecordedGroup = Schema.Struct({
  pgid: Schema.Int,
  /** The leader's start time (`ProcStat.startTime`) when it was recorded. */
  startTime: Schema.Int,
  /** The value of `GROUP_TOKEN_ENV` in the group's environment. */
  token: Schema.String,
  command: Schema.String,
  recordedAt: Schema.String
})
export type RecordedGroup = typeof RecordedGroup.Type

/** One server run's groups: `<data dir>/process-groups/run-<pid>-<start time>.json`, mode 0600. */
export const RunRecord = Schema.Struct({
  version: Schema.Literal(1),
  /** Start times only mean something within one boot. */
  bootId: Schema.String,
  owner: Schema.Struct({ pid: Schema.Int, startTime: Schema.Int }),
  groups: Schema.Array(RecordedGroup)
})
export type RunRecord = typeof RunRecord.Type

export const processGroupsDir = (dataDir: string): string => join(dataDir, "process-groups")

const decodeRunRecord = Schema.decodeUnknownExit(RunRecord)

/** A run's record file (or the temporary file of its atomic write): its recorder's pid and start time. */
const RUN_FILE = /^run-(\d+)-(\d+)\.json(\.tmp)?$/

/**
 * Kills one recorded group if it is provably the recorded one. A pid is not reused while it
 * names a live process or a process group that still has members, so:
 *  - the leader is alive with the recorded start time: the group is ours;
 *  - the leader is alive with another start time: its pid was reused, nothing of ours is left;
 *  - the leader is gone: the group is ours if one of its members, started after the leader,
 *    carries the group's token (a new group with the same id could only be a stranger's).
 */
export const endLeftover = (group: RecordedGroup): "ended" | "gone" | "spared" => {
  const leader = readProcStat(group.pgid)
  if (leader !== undefined) {
    if (leader.startTime !== group.startTime) return "spared"
    signalGroup(group.pgid)
    return "ended"
  }
  const members = allPids()
    .map(readProcStat)
    .filter((s): s is ProcStat => s !== undefined && s.pgrp === group.pgid && s.startTime >= group.startTime)
  if (members.length === 0) return "gone"
  if (!members.some((m) => carriesToken(m.pid, group.token))) return "spared"
  signalGroup(group.pgid)
  return "ended"
}

const isAlive = (owner: RunRecord["owner"]): boolean => readProcStat(owner.pid)?.startTime === owner.startTime

// ---- the durable registry -----------------------------------------------------------------

const durable = (dataDir: string) =>
  Effect.gen(function* () {
    const dir = processGroupsDir(dataDir)
    const self = readProcStat(process.pid)
    // No procfs, no identities to record (not Linux): provider sessions fail to start anyway,
    // for want of setpriv, and the server's other services still work.
    if (self === undefined) return unrecorded
    yield* Effect.try({
      try: () => mkdirSync(dir, { recursive: true, mode: 0o700 }),
      catch: adapterFailure("start_failed", `cannot keep provider process records in ${dir}`)
    })
    const owner = { pid: process.pid, startTime: self.startTime }
    const bootId = readBootId()
    const file = join(dir, `run-${owner.pid}-${owner.startTime}.json`)
    const groups = new Map<number, RecordedGroup>()
    // Atomic (write, then rename): a crash leaves the old record or the new one, never half of
    // one. No fsync: only a power loss could lose it, and that ends every process anyway.
    const persist = () => {
      const record: RunRecord = { version: 1, bootId, owner, groups: [...groups.values()] }
      writeFileSync(`${file}.tmp`, JSON.stringify(record), { mode: 0o600 })
      renameSync(`${file}.tmp`, file)
    }
    // Started by the first group recorded, not with the server: spawning it (a fork of the whole
    // server process, ~5 % of `serve`'s CPU before it answers) watches nothing until a session runs.
    let watchdog: Watchdog | undefined
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        // Sessions are closed before this layer is released: anything still here leaked.
        for (const pgid of groups.keys()) signalGroup(pgid)
        groups.clear()
        rmSync(file, { force: true })
        watchdog?.close()
      })
    )

    const track: ProcessGroupsService["track"] = ({ pid, token, command }) =>
      Effect.try({
        try: (): TrackedGroup => {
          const leader = readProcStat(pid)
          // Gone before it could be recorded: there is nothing left to end.
          if (leader === undefined) return untracked
          const recordedAt = new Date().toISOString()
          groups.set(pid, { pgid: pid, startTime: leader.startTime, token, command, recordedAt })
          persist()
          watchdog ??= startWatchdog()
          watchdog.send(`+${pid}`)
          const release = Effect.sync(() => {
            if (groups.get(pid)?.token !== token) return
            groups.delete(pid)
            watchdog?.send(`-${pid}`)
            try {
              persist()
            } catch {
              // A stale record is harmless: recovery finds the group gone.
            }
          })
          return { release }
        },
        catch: (cause) => {
          groups.delete(pid)
          return adapterFailure("start_failed", `cannot record provider process group ${pid} in ${dir}`)(cause)
        }
      })

    const recoverLeftovers = Effect.sync((): LeftoverReport => {
      let ended = 0
      let spared = 0
      let names: ReadonlyArray<string> = []
      try {
        names = readdirSync(dir)
      } catch {
        return { ended, spared }
      }
      for (const name of names) {
        const path = join(dir, name)
        const recorder = RUN_FILE.exec(name)
        if (recorder === null || path === file || path === `${file}.tmp`) continue
        // Another server on this data dir is still running: its groups, and its files, are its own.
        if (isAlive({ pid: Number(recorder[1]), startTime: Number(recorder[2]) })) continue
        if (recorder[3] === undefined) {
          let parsed: unknown
          try {
            parsed = JSON.parse(readFileSync(path, "utf8"))
          } catch {
            parsed = undefined
          }
          const record = decodeRunRecord(parsed)
          // Start times are only comparable within one boot; after a reboot nothing recorded runs.
          if (Exit.isSuccess(record) && record.value.bootId === bootId) {
            for (const group of record.value.groups) {
              const outcome = endLeftover(group)
              if (outcome === "ended") ended += 1
              if (outcome === "spared") spared += 1
            }
          }
        }
        rmSync(path, { force: true })
      }
      return { ended, spared }
    })

    return { track, recoverLeftovers } satisfies ProcessGroupsService
  })

/**
 * The process groups of this server's provider sessions. A reference: without the durable
 * layer (tests, tools) it is `unrecorded`, and every provider still gets its parent-death signal.
 */
export const ProcessGroups = Context.Reference<ProcessGroupsService>("planbridge/ProcessGroups", {
  defaultValue: () => unrecorded
})

/** Records under `<dataDir>/process-groups/`, a watchdog, and recovery of earlier runs' groups. */
export const processGroupsLayer = (dataDir: string): Layer.Layer<never, AdapterError> =>
  Layer.effect(ProcessGroups, durable(dataDir))
