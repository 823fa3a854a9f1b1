import { readdirSync, readFileSync } from "node:fs"

/** `/proc/<pid>/stat`'s parent pid, or undefined for a process that is gone. */
const parentOf = (pid: string): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) is parenthesised and may hold spaces: the fields after it count.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]
  } catch {
    return undefined
  }
}

const commandOf = (pid: string): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()
  } catch {
    return ""
  }
}

/**
 * Every process below `pid` now, with its command line (Linux `/proc`): a replay server has
 * none, since it starts no provider program.
 */
export const descendantsOf = (pid: number): ReadonlyArray<{ readonly pid: number; readonly command: string }> => {
  const children = new Map<string, Array<string>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/u.test(entry)) continue
    const parent = parentOf(entry)
    if (parent === undefined) continue
    children.set(parent, [...(children.get(parent) ?? []), entry])
  }
  const found: Array<{ pid: number; command: string }> = []
  const walk = (at: string) => {
    for (const child of children.get(at) ?? []) {
      found.push({ pid: Number(child), command: commandOf(child) })
      walk(child)
    }
  }
  walk(String(pid))
  return found
}

/**
 * What the server runs besides providers: its process-group watchdog (a shell, from start-up),
 * and, when it runs from TypeScript sources (PLANBRIDGE_FROM_SOURCE=1), tsx's esbuild service.
 */
const SERVER_HELPERS = [/ planbridge-process-watchdog$/u, /\/esbuild --service=/u]

/** The programs below the server `pid` that are not its own helpers: a provider it started, say. */
export const programsStartedBy = (pid: number): ReadonlyArray<{ readonly pid: number; readonly command: string }> =>
  descendantsOf(pid).filter((p) => !SERVER_HELPERS.some((helper) => helper.test(p.command)))
