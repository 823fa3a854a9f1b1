import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { accessSync, constants } from "node:fs"
import { delimiter, join } from "node:path"
import { browserUrl } from "../http/BrowserUrl.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { serverUrlFor } from "./serverAddress.ts"
import { clientTokenOf } from "./storedToken.ts"

/** A program by name on PATH, by its full path, if it is there and executable. */
const onPath = (name: string, path: string | undefined): string | undefined => {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not in this directory
    }
  }
  return undefined
}

/**
 * What opens a URL in the desktop's browser: macOS's `open`; elsewhere freedesktop's `xdg-open`,
 * and only with a display to open it on (Debian's `open` may be `openvt`, and `xdg-open` on a
 * headless server fails where nobody sees it). Undefined means: print the address instead.
 */
export const browserOpener = (platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string | undefined => {
  if (platform === "darwin") return onPath("open", env.PATH)
  if (platform === "win32") return undefined
  if ((env.DISPLAY ?? "") === "" && (env.WAYLAND_DISPLAY ?? "") === "") return undefined
  return onPath("xdg-open", env.PATH)
}

/**
 * `planbridge open`: opens the web UI signed in. The address carries the token in its fragment,
 * so it is printed only when no opener exists (the user then pastes it); an opener gets it as an
 * argument and runs detached, so this command ends at once.
 */
export const open = (input: { readonly url: string | undefined; readonly dataDir: string }) =>
  Effect.gen(function* () {
    const io = yield* Io
    const server = serverUrlFor(input.url, input.dataDir)
    if ("problem" in server) {
      io.err(`planbridge open: ${server.problem}\n`)
      return ExitCode.failed
    }
    // Read, never created: a new token would match no server.
    const found = clientTokenOf(input.dataDir)
    if ("refusal" in found) {
      io.err(`planbridge open: ${found.refusal}; or set PLANBRIDGE_TOKEN\n`)
      return ExitCode.failed
    }
    let address: string
    try {
      address = browserUrl(server.url, found.token)
    } catch {
      io.err(`planbridge open: --url ${server.url} is not a URL\n`)
      return ExitCode.usage
    }
    const opener = browserOpener(process.platform, process.env)
    if (opener === undefined) {
      io.out(`${address}\n`)
      return ExitCode.ok
    }
    const child = spawn(opener, [address], { detached: true, stdio: "ignore" })
    child.on("error", () => {})
    child.unref()
    io.out(`opened ${new URL(address).origin}/ with ${opener}\n`)
    return ExitCode.ok
  })
