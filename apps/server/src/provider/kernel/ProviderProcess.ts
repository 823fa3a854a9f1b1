import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { randomUUID } from "node:crypto"
import { accessSync, constants, statSync } from "node:fs"
import { delimiter, isAbsolute, join, resolve } from "node:path"
import { Cause, type Duration, Effect, Exit, Option, type Scope } from "effect"
import { AdapterError, adapterError, adapterFailure } from "../AdapterError.ts"
import { ProcessGroups, type ProcessGroupsService, type TrackedGroup } from "../ProcessGroups.ts"
import { GROUP_TOKEN_ENV, groupHasLiveMembers, signalGroup } from "./procfs.ts"

/**
 * The one lifecycle of a provider process (Codex app-server, the Claude Code CLI, an ACP agent):
 *  1. spawned through `guardCommand` (below: a parent-death SIGKILL), detached, so that it leads its own
 *     process group (pid = pgid) and the tools it starts can be ended with it;
 *  2. recorded in `ProcessGroups` before anything is reported about its session, so that a crash
 *     of the server cannot orphan it;
 *  3. its stderr kept as a bounded tail, for error messages;
 *  4. ended by `shutdown`: stdin ended → SIGTERM to the group → a grace period until no live
 *     process of the group remains → SIGKILL to the group → its record released → a short wait
 *     until the SIGKILLed processes are gone. The wait is on
 *     the group, not the leader: claude-agent-acp exits at once on SIGTERM while the Claude CLI it
 *     started still writes the session's transcript (killing it then broke `session/load`);
 *  5. when the leader exits on its own (a crash, not our shutdown), the rest of its group is
 *     SIGKILLed at once: an npm wrapper's native binary or a tool's shell must not outlive it.
 *
 * `effect/unstable/process` (effect 4.1.0) was considered: its spawner lives in
 * `@effect/platform-node`, hands out Effect Streams where the Claude Agent SDK's synchronous
 * `spawnClaudeCodeProcess` hook needs Node streams, and waits on the leader, not on the group.
 */

/**
 * How every provider process is started: through `setpriv --pdeathsig KILL` (util-linux ≥ 2.33),
 * so that the kernel kills it when the server dies, however it dies. The signal reaches only
 * that process; what it starts is ended with its process group (below, and ProcessGroups.ts),
 * which the token in its environment identifies. There is no fallback: without setpriv a provider could
 * outlive a crashed server, so its session does not start.
 */

/** setpriv (`command`) and its arguments; the given environment plus the group's token; the provider's own command line (its first 512 characters), for records. */
export interface GuardedCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string | undefined>
  readonly token: string
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
}): GuardedCommand | AdapterError => {
  const setpriv = findSetpriv()
  if (setpriv === undefined) {
    return adapterError(
      "start_failed",
      "setpriv (util-linux ≥ 2.33) is required to tie provider processes to the server's life " +
        "(a parent-death signal), and it is not on PATH nor in /usr/bin, /bin, /usr/sbin, /sbin; install util-linux"
    )
  }
  const path = input.env.PATH ?? process.env.PATH ?? "/usr/bin:/bin"
  const resolved = findExecutable(input.command, path, input.cwd)
  if (resolved === undefined) return adapterError("start_failed", `spawn ${input.command} ENOENT`)
  const token = randomUUID()
  return {
    command: setpriv,
    args: ["--pdeathsig", "KILL", "--", resolved, ...input.args],
    env: { ...input.env, [GROUP_TOKEN_ENV]: token },
    token,
    display: [input.command, ...input.args].join(" ").slice(0, 512)
  }
}

export interface ProviderProcessOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  /** How much of stderr is kept (its tail), in UTF-16 code units. */
  readonly stderrLimit: number
}

export interface ProviderProcess {
  readonly child: ChildProcessWithoutNullStreams
  /** The leader's pid, which is also its group's id. */
  readonly pid: number
  readonly stderrTail: () => string
  /** Signals every process of the group. */
  readonly signalGroup: (signal: NodeJS.Signals) => void
  /** True once `shutdown` began: an exit after that is ours, not a crash. */
  readonly closing: () => boolean
  /** The graceful end (steps 4 above). Idempotent: the second run waits for the first. */
  readonly shutdown: Effect.Effect<void>
}

/** How long the group gets to exit after SIGTERM before it is SIGKILLed. */
const SHUTDOWN_GRACE = "3 seconds"
/** How long SIGKILLed processes may take to be gone (they cannot refuse; only scheduling delays them). */
const KILL_GRACE = "1 second"
/**
 * The first and the longest pause between two looks at the group, which read /proc for every
 * process on the machine: doubling, a group that ends at once is seen at once, and one that
 * lingers through the grace period is not read fifty times a second.
 */
const GROUP_POLL_FIRST_MS = 10
const GROUP_POLL_MAX_MS = 160

/**
 * Spawns and records the process. Synchronous (no async step inside), so that the Claude Agent
 * SDK's synchronous spawn hook can run it; the Scope-owning callers use `acquireProviderProcess`.
 */
const spawnProviderProcess = Effect.fn("ProviderProcess.spawn")(function* (options: ProviderProcessOptions) {
  const groups = yield* ProcessGroups
  const guarded = guardCommand(options)
  if (guarded instanceof AdapterError) {
    return yield* adapterError("start_failed", `cannot start ${options.command}: ${guarded.message}`, {
      cause: guarded
    })
  }
  const child = yield* Effect.try({
    try: () =>
      spawn(guarded.command, [...guarded.args], {
        cwd: options.cwd,
        env: guarded.env,
        detached: true,
        stdio: ["pipe", "pipe", "pipe"]
      }),
    catch: adapterFailure("start_failed", `cannot start ${options.command}`)
  })
  const pid = child.pid
  if (pid === undefined) {
    return yield* adapterError("start_failed", `cannot start ${options.command}: no process was created`)
  }
  // Recorded before anything is reported about the session: a crash from here on cannot orphan it.
  const tracked: TrackedGroup = yield* groups
    .track({ pid, token: guarded.token, command: guarded.display })
    .pipe(Effect.tapError(() => Effect.sync(() => signalGroup(pid, "SIGKILL"))))

  let closing = false
  let reaped = false
  let stderr = ""
  /** The last SIGKILL to the group: nothing of it is left to record. */
  const reap = Effect.sync(() => {
    signalGroup(pid, "SIGKILL")
    reaped = true
  }).pipe(Effect.andThen(tracked.release))
  /** Until no live process of the group remains, at most `within`. */
  const groupGone = (within: Duration.Input) =>
    Effect.gen(function* () {
      for (let pause = GROUP_POLL_FIRST_MS; groupHasLiveMembers(pid); pause = Math.min(2 * pause, GROUP_POLL_MAX_MS))
        yield* Effect.sleep(pause)
    }).pipe(Effect.timeoutOption(within), Effect.asVoid)
  // `release` is synchronous (ProcessGroups.ts); an exit listener is plain Node code.
  const reapNow = () => {
    if (!reaped) Effect.runSyncExit(reap)
  }

  child.on("error", () => {
    // A late spawn failure: the callers' own listeners report it; unheard, Node would crash.
  })
  child.stdin.on("error", () => {
    // EPIPE after the process died; its exit is reported by the caller's own listener.
  })
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-options.stderrLimit)
  })
  child.once("exit", () => {
    // Our shutdown gives the rest of the group its grace period first.
    if (!closing) reapNow()
  })

  const shutdown = yield* Effect.cached(
    Effect.gen(function* () {
      closing = true
      child.stdin.end()
      if (groupHasLiveMembers(pid)) {
        signalGroup(pid, "SIGTERM")
        yield* groupGone(SHUTDOWN_GRACE)
      }
      yield* reap
      // A SIGKILLed process is gone only once the kernel scheduled it: under load that takes a
      // moment, and a closed session must not leave a process behind even briefly.
      yield* groupGone(KILL_GRACE)
    }).pipe(Effect.withSpan("ProviderProcess.shutdown"))
  )

  const process_: ProviderProcess = {
    child,
    pid,
    stderrTail: () => stderr,
    signalGroup: (signal) => signalGroup(pid, signal),
    closing: () => closing,
    shutdown
  }
  return process_
})

/** `spawnProviderProcess`, ended by `shutdown` when the Scope closes. */
export const acquireProviderProcess = (
  options: ProviderProcessOptions
): Effect.Effect<ProviderProcess, AdapterError, Scope.Scope> =>
  Effect.acquireRelease(spawnProviderProcess(options), (p) => p.shutdown)

/** For the synchronous spawn hooks of SDKs: the process, or its `AdapterError` (an `Error`) thrown. */
export const spawnProviderProcessSync = (
  options: ProviderProcessOptions,
  groups: ProcessGroupsService
): ProviderProcess => {
  const spawned = Effect.runSyncExit(spawnProviderProcess(options).pipe(Effect.provideService(ProcessGroups, groups)))
  if (Exit.isSuccess(spawned)) return spawned.value
  throw Option.getOrElse(Cause.findErrorOption(spawned.cause), () => Cause.squash(spawned.cause))
}
