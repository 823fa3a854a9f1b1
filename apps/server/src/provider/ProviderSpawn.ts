import { accessSync, constants, statSync } from "node:fs"
import { delimiter, isAbsolute, join, resolve } from "node:path"
import { Schema } from "effect"
import { GROUP_TOKEN_ENV, newGroupToken } from "./ProcessGroups.ts"

/**
 * How every provider process is started: through `setpriv --pdeathsig KILL` (util-linux ≥ 2.33),
 * so that the kernel kills it when the server dies, however it dies. The signal reaches only
 * that process; what it starts is ended with its process group (ProcessGroups.ts), which the
 * token in its environment identifies. There is no fallback: without setpriv a provider could
 * outlive a crashed server, so its session does not start.
 */

export class ProviderSpawnError extends Schema.TaggedError<ProviderSpawnError>()("ProviderSpawnError", {
  message: Schema.String
}) {}

export interface GuardedCommand {
  /** The absolute path of setpriv. */
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The given environment plus the group's token. */
  readonly env: Record<string, string | undefined>
  readonly token: string
  /** The provider's own command line (its first 512 characters), for records and messages. */
  readonly display: string
}

const isExecutableFile = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** Where `spawn` would find `command`: relative to `cwd` when it has a slash, else on `path`. */
const findExecutable = (command: string, path: string, cwd: string): string | undefined => {
  if (command.includes("/")) {
    const full = isAbsolute(command) ? command : resolve(cwd, command)
    return isExecutableFile(full) ? full : undefined
  }
  return path
    .split(delimiter)
    .filter((dir) => dir.length > 0)
    .map((dir) => join(resolve(cwd, dir), command))
    .find(isExecutableFile)
}

let setprivPath: string | undefined

/** setpriv from the server's PATH or util-linux's usual places; looked up once. */
const findSetpriv = (): string | undefined => {
  const path = [process.env.PATH ?? "", "/usr/bin", "/bin", "/usr/sbin", "/sbin"].join(delimiter)
  setprivPath ??= findExecutable("setpriv", path, "/")
  return setprivPath
}

/**
 * The command line that runs `command` under a parent-death SIGKILL, with a fresh group token.
 * The command is resolved here, as `spawn` would resolve it (on the environment's PATH), so that
 * a missing program is still reported as `spawn <command> ENOENT` rather than as setpriv's exit.
 */
export const guardCommand = (input: {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
}): GuardedCommand | ProviderSpawnError => {
  const setpriv = findSetpriv()
  if (setpriv === undefined) {
    return new ProviderSpawnError({
      message:
        "setpriv (util-linux ≥ 2.33) is required to tie provider processes to the server's life " +
        "(a parent-death signal), and it is not on PATH nor in /usr/bin, /bin, /usr/sbin, /sbin; install util-linux"
    })
  }
  const path = input.env.PATH ?? process.env.PATH ?? "/usr/bin:/bin"
  const resolved = findExecutable(input.command, path, input.cwd)
  if (resolved === undefined) return new ProviderSpawnError({ message: `spawn ${input.command} ENOENT` })
  const token = newGroupToken()
  return {
    command: setpriv,
    args: ["--pdeathsig", "KILL", "--", resolved, ...input.args],
    env: { ...input.env, [GROUP_TOKEN_ENV]: token },
    token,
    display: [input.command, ...input.args].join(" ").slice(0, 512)
  }
}
