import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { ensurePrivateDir, warnOnStderr } from "../persistence/PrivateFiles.ts"

/**
 * `<data dir>/server.json`: where the server running on a data dir listens, so that every other
 * command (`open`, `prompts`, `rebuild`, `token`) finds it instead of assuming a port. `serve`
 * writes it once it listens and removes it when it stops cleanly; a SIGKILL leaves it behind,
 * which readers recognise by its process being gone and report rather than use. It holds no
 * token (the token file is beside it): the address, the process id, the start time and whether
 * the token is the stored one.
 */
export const serverAddressFileIn = (dataDir: string): string => join(resolve(dataDir), "server.json")

export interface ServerAddress {
  /** The base URL a client on this machine reaches the server at, e.g. `http://127.0.0.1:34317`. */
  readonly url: string
  readonly pid: number
  readonly startedAt: string
  /** Whether the server uses the data dir's token file, or one given by --token / PLANBRIDGE_TOKEN (never written here). */
  readonly tokenSource: "data-dir" | "given"
}

/** What a data dir says about its server. */
export type RecordedServer =
  | { readonly kind: "none"; readonly file: string }
  | { readonly kind: "running"; readonly file: string; readonly address: ServerAddress }
  /** The file names a process that is gone: the server did not stop cleanly (SIGKILL, a crash). */
  | { readonly kind: "stale"; readonly file: string; readonly address: ServerAddress }
  | { readonly kind: "unreadable"; readonly file: string; readonly why: string }

/**
 * The URL clients use for a server bound to `url`'s host: a wildcard bind (0.0.0.0, ::) is
 * reached on loopback, which it includes, rather than at an address that means "any".
 */
export const clientUrlOf = (url: string): string => {
  const parsed = new URL(url)
  if (parsed.hostname === "0.0.0.0") parsed.hostname = "127.0.0.1"
  else if (parsed.hostname === "[::]") parsed.hostname = "[::1]"
  return parsed.origin
}

/** Written aside and renamed over the file, so that a reader never sees half of it; mode 0600 in a 0700 dir. */
export const writeServerAddress = (dataDir: string, address: ServerAddress): void => {
  ensurePrivateDir(resolve(dataDir), warnOnStderr)
  const file = serverAddressFileIn(dataDir)
  const aside = `${file}.${address.pid}.tmp`
  writeFileSync(aside, `${JSON.stringify(address)}\n`, { mode: 0o600 })
  renameSync(aside, file)
}

/** Removes the file if it still names this process (a later server on the same data dir keeps its own). */
export const removeServerAddress = (dataDir: string, pid: number): void => {
  const recorded = readServerAddress(dataDir)
  if (recorded.kind === "running" && recorded.address.pid === pid) rmSync(recorded.file, { force: true })
}

/** Whether a process with this id exists (EPERM: it does, as another user's). */
const processExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const isAddress = (value: unknown): value is ServerAddress => {
  if (typeof value !== "object" || value === null) return false
  const v = value as Record<string, unknown>
  return (
    typeof v.url === "string" &&
    URL.canParse(v.url) &&
    Number.isInteger(v.pid) &&
    (v.pid as number) > 0 &&
    typeof v.startedAt === "string" &&
    (v.tokenSource === "data-dir" || v.tokenSource === "given")
  )
}

/** Reads the data dir's server address, never creating anything. */
export const readServerAddress = (dataDir: string): RecordedServer => {
  const file = serverAddressFileIn(dataDir)
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "none", file }
    return { kind: "unreadable", file, why: (error as Error).message }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { kind: "unreadable", file, why: "not JSON" }
  }
  if (!isAddress(value)) return { kind: "unreadable", file, why: "not {url, pid, startedAt, tokenSource}" }
  return { kind: processExists(value.pid) ? "running" : "stale", file, address: value }
}

/** One line saying what a data dir's address file says, for a command that found no usable server. */
export const describeRecorded = (recorded: Exclude<RecordedServer, { kind: "running" }>, dataDir: string): string => {
  const start = `start it with \`npx planbridge serve --data-dir ${dataDir}\`, or pass --url`
  switch (recorded.kind) {
    case "none":
      return `no server is running on the data dir ${resolve(dataDir)} (no ${recorded.file}); ${start}`
    case "stale":
      return (
        `no server is running on the data dir ${resolve(dataDir)}: ${recorded.file} names process ` +
        `${recorded.address.pid} at ${recorded.address.url}, which is gone (the server did not stop cleanly); ${start}`
      )
    case "unreadable":
      return `${recorded.file} cannot be read (${recorded.why}); ${start}`
  }
}

/**
 * The server a client command talks to: `--url` when given, else the one running on the data
 * dir. No file, a stale one or an unreadable one is a `problem` to report, never a guess.
 */
export const serverUrlFor = (
  explicit: string | undefined,
  dataDir: string
): { readonly url: string } | { readonly problem: string } => {
  if (explicit !== undefined) return { url: explicit }
  const recorded = readServerAddress(dataDir)
  return recorded.kind === "running" ? { url: recorded.address.url } : { problem: describeRecorded(recorded, dataDir) }
}
