import { readdirSync, readFileSync } from "node:fs"

/**
 * What /proc says about processes and process groups: the facts that let the server end exactly
 * its own provider groups (ProcessGroups.ts, ProviderProcess.ts), never a stranger's.
 */

/** The variable carrying a group's token; whatever the provider starts inherits it. */
export const GROUP_TOKEN_ENV = "PLANBRIDGE_PROCESS_GROUP"

export interface ProcStat {
  readonly pid: number
  readonly pgrp: number
  /** Field 3: `Z` for a zombie. */
  readonly state: string
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
  return { pid, pgrp, startTime, state: fields[0] ?? "" }
}

/**
 * Whether any process of the group is still running (zombies excluded: they have nothing left
 * to do, and whether one is reaped depends on who adopted it). A graceful stop waits on this,
 * not on the group's leader: an agent's own children (Claude's CLI under claude-agent-acp)
 * may still be writing their session files when the leader has exited.
 */
export const groupHasLiveMembers = (pgid: number): boolean =>
  allPids().some((pid) => {
    const stat = readProcStat(pid)
    return stat !== undefined && stat.state !== "Z" && stat.pgrp === pgid
  })

export const allPids = (): ReadonlyArray<number> => {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
  } catch {
    return []
  }
}

export const carriesToken = (pid: number, token: string): boolean => {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`${GROUP_TOKEN_ENV}=${token}`)
  } catch {
    return false
  }
}

export const readBootId = (): string => {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
  } catch {
    return "unknown"
  }
}

/** Signals every process of the group (SIGKILL unless told). */
export const signalGroup = (pgid: number, signal: NodeJS.Signals = "SIGKILL"): void => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: the group is gone already.
  }
}
