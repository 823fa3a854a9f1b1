import { spawn, type ChildProcess } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Exit, Layer, Schema } from "effect"

/**
 * Provider process groups must not outlive the server. Every provider child runs in its own
 * process group (pid = pgid) under a parent-death signal (ProviderSpawn.ts), which reaches only
 * that child: the tools it started live on in its group. So the server's `ProcessGroups`
 * records every group in the data dir before its session is reported started, and
 *  - a watchdog (a small shell whose stdin is a pipe from the server) kills the recorded groups
 *    the moment that pipe closes, i.e. when the server dies, whatever killed it;
 *  - start-up recovery kills the groups a run that is over left behind (the watchdog died too),
 *    only once it has proved that a group is the recorded one (`endLeftover`), never by name.
 * Without a data dir (test harnesses) nothing is recorded: the default is `unrecorded`.
 */

/** The variable carrying a group's token; whatever the provider starts inherits it. */
export const GROUP_TOKEN_ENV = "PLANBRIDGE_PROCESS_GROUP"

export class ProcessGroupError extends Schema.TaggedError<ProcessGroupError>()("ProcessGroupError", {
  message: Schema.String
}) {}

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
  }) => Effect.Effect<TrackedGroup, ProcessGroupError>
  /** Ends the groups recorded by runs that are over (identity-checked) and deletes their records. */
  readonly recoverLeftovers: Effect.Effect<LeftoverReport>
}

const untracked: TrackedGroup = { release: Effect.void }

/** No data dir, no records: provider groups still get their parent-death signal. */
export const unrecorded: ProcessGroupsService = {
  track: () => Effect.succeed(untracked),
  recoverLeftovers: Effect.succeed({ ended: 0, spared: 0 })
}

// ---- /proc --------------------------------------------------------------------------------

export interface ProcStat {
  readonly pid: number
  readonly pgrp: number
  /** Clock ticks after boot (field 22): with the pid, it names one process for the life of the system. */
  readonly startTime: number
}

/** `/proc/<pid>/stat`, read after the command name (which may hold spaces and parentheses). */
export const readProcStat = (pid: number): ProcStat | undefined => {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  // fields[0] is field 3 (state): pgrp is field 5, starttime field 22.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  const pgrp = Number(fields[2])
  const startTime = Number(fields[19])
  if (!Number.isSafeInteger(pgrp) || !Number.isSafeInteger(startTime)) return undefined
  return { pid, pgrp, startTime }
}

/**
 * Whether any process of the group is still running (zombies excluded: they have nothing left
 * to do, and whether one is reaped depends on who adopted it). A graceful stop waits on this,
 * not on the group's leader: an agent's own children (Claude's CLI under claude-agent-acp)
 * may still be writing their session files when the leader has exited.
 */
export const groupHasLiveMembers = (pgid: number): boolean =>
  allPids().some((pid) => {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
      return fields[0] !== "Z" && Number(fields[2]) === pgid
    } catch {
      return false
    }
  })

const allPids = (): ReadonlyArray<number> => {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
  } catch {
    return []
  }
}

const carriesToken = (pid: number, token: string): boolean => {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`${GROUP_TOKEN_ENV}=${token}`)
  } catch {
    return false
  }
}

const readBootId = (): string => {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
  } catch {
    return "unknown"
  }
}

const killGroup = (pgid: number): void => {
  try {
    process.kill(-pgid, "SIGKILL")
  } catch {
    // ESRCH: the group is gone already.
  }
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
    killGroup(group.pgid)
    return "ended"
  }
  const members = allPids()
    .map(readProcStat)
    .filter((s): s is ProcStat => s !== undefined && s.pgrp === group.pgid && s.startTime >= group.startTime)
  if (members.length === 0) return "gone"
  if (!members.some((m) => carriesToken(m.pid, group.token))) return "spared"
  killGroup(group.pgid)
  return "ended"
}

const isAlive = (owner: RunRecord["owner"]): boolean => readProcStat(owner.pid)?.startTime === owner.startTime

// ---- the watchdog ---------------------------------------------------------------------------

/**
 * Reads `+<pgid>` and `-<pgid>` lines; when its stdin ends (the server exited or was killed:
 * the kernel closes the pipe either way) it SIGKILLs every group still recorded. Those groups
 * were alive a moment before, so their ids cannot have been reused yet.
 */
const WATCHDOG_SCRIPT = `
trap '' HUP INT
groups=" "
while IFS= read -r line; do
  case "$line" in
    +[0-9]*) groups="$groups\${line#+} " ;;
    -[0-9]*)
      rest=" "
      for g in $groups; do [ "$g" = "\${line#-}" ] || rest="$rest$g "; done
      groups="$rest" ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
`

/** The watchdog's `argv[0]`, so that it can be told apart in `ps`. */
export const WATCHDOG_NAME = "planbridge-process-watchdog"

interface Watchdog {
  readonly send: (line: string) => void
  readonly close: () => void
}

const startWatchdog = (): Watchdog => {
  let child: ChildProcess | undefined
  try {
    // Detached: a Ctrl-C meant for the server's terminal group must not reach it.
    child = spawn("/bin/sh", ["-c", WATCHDOG_SCRIPT, WATCHDOG_NAME], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"]
    })
  } catch {
    // No watchdog: start-up recovery still ends what a crash leaves behind.
    return { send: () => undefined, close: () => undefined }
  }
  const proc = child
  let open = true
  proc.on("error", () => {
    open = false
  })
  proc.stdin?.on("error", () => {
    open = false
  })
  // Neither keeps the server's event loop alive.
  proc.unref()
  const stdin = proc.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null
  stdin?.unref?.()
  return {
    send: (line) => {
      if (open) proc.stdin?.write(`${line}\n`)
    },
    close: () => {
      open = false
      proc.stdin?.end()
    }
  }
}

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
      catch: (cause) =>
        new ProcessGroupError({ message: `cannot keep provider process records in ${dir}: ${String(cause)}` })
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
    const watchdog = yield* Effect.acquireRelease(Effect.sync(startWatchdog), (w) =>
      Effect.sync(() => {
        // Sessions are closed before this layer is released: anything still here leaked.
        for (const pgid of groups.keys()) killGroup(pgid)
        groups.clear()
        rmSync(file, { force: true })
        w.close()
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
          watchdog.send(`+${pid}`)
          const release = Effect.sync(() => {
            if (groups.get(pid)?.token !== token) return
            groups.delete(pid)
            watchdog.send(`-${pid}`)
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
          const message = `cannot record provider process group ${pid} in ${dir}: ${String(cause)}`
          return new ProcessGroupError({ message })
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
export const processGroupsLayer = (dataDir: string): Layer.Layer<never, ProcessGroupError> =>
  Layer.effect(ProcessGroups, durable(dataDir))

/** A fresh token for a group about to be spawned. */
export const newGroupToken = (): string => randomUUID()
