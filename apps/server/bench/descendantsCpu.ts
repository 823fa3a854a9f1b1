import { readdirSync, readFileSync } from "node:fs"

/** Clock ticks per second of `/proc/<pid>/stat`'s times (USER_HZ: 100 on Linux). */
const USER_HZ = 100

interface ProcStat {
  readonly ppid: number
  /** utime + stime of the process itself (not of its reaped children), in ms. */
  readonly cpuMs: number
}

const readStat = (pid: number): ProcStat | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) may hold spaces and parentheses: the fields after it are split.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { ppid: Number(fields[1]), cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ }
  } catch {
    return undefined // gone since the listing
  }
}

/**
 * The CPU time (user + system, ms, 10 ms resolution) of the processes below `root` that are
 * alive now, excluding the subtrees of `except`: the provider programs a bench side runs (an
 * app-server uses more CPU than the client driving it, and on a 2-core machine each competes
 * with the other). Linux only, like the bench's network namespace.
 */
export const descendantsCpuMs = (root: number, except: ReadonlyArray<number> = []): number => {
  const stats = new Map<number, ProcStat>()
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    const stat = readStat(pid)
    if (stat !== undefined) stats.set(pid, stat)
  }
  /** Whether `pid` descends from `root` through no process of `except`. */
  const below = (pid: number): boolean => {
    for (let node = pid, at = stats.get(pid); at !== undefined; node = at.ppid, at = stats.get(at.ppid)) {
      if (except.includes(node)) return false
      if (at.ppid === root) return true
    }
    return false
  }
  let total = 0
  for (const [pid, stat] of stats) if (below(pid)) total += stat.cpuMs
  return total
}
