import { resolve } from "node:path"
import { readStoredToken } from "../http/Security.ts"
import { readServerAddress } from "./serverAddress.ts"

/**
 * What `planbridge token` prints for a data dir: the stored token, or why there is none the
 * running server accepts. It never creates one: a token made up in a directory no server uses
 * (`./.planbridge/` is relative, so any other working directory) would only be rejected.
 * Shared with the fast path (fastPath.ts), so both say the same; it imports no effect,
 * no server and no store: only `Security.ts` and the address file.
 */
export const tokenOf = (dataDir: string): { readonly token: string } | { readonly refusal: string } => {
  const dir = resolve(dataDir)
  const recorded = readServerAddress(dir)
  if (recorded.kind === "running" && recorded.address.tokenSource === "given") {
    return {
      refusal:
        `the server on ${dir} (process ${recorded.address.pid}, ${recorded.address.url}) was started with ` +
        `--token or PLANBRIDGE_TOKEN: that is its token, not one stored in the data dir`
    }
  }
  const token = readStoredToken(dir)
  if (token !== undefined) return { token }
  return {
    refusal:
      `no token in ${dir}: \`serve\` stores one there when it first starts without --token, and none has ` +
      `(--data-dir defaults to ./.planbridge/ in the current directory); pass the --data-dir the server ` +
      `runs with, or start it: \`npx planbridge serve --data-dir ${dataDir}\``
  }
}

/** The token a client command (`open`, `prompts`) sends: PLANBRIDGE_TOKEN when set, else the data dir's. */
export const clientTokenOf = (dataDir: string): ReturnType<typeof tokenOf> => {
  const fromEnv = process.env.PLANBRIDGE_TOKEN
  return fromEnv !== undefined && fromEnv !== "" ? { token: fromEnv } : tokenOf(dataDir)
}
