import { spawn, type ChildProcess } from "node:child_process"

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

export interface Watchdog {
  readonly send: (line: string) => void
  readonly close: () => void
}

export const startWatchdog = (): Watchdog => {
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
