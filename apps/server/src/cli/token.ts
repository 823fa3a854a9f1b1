import * as Effect from "effect/Effect"
import { resolve } from "node:path"
import { loadOrCreateToken } from "../http/Security.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"

/**
 * `planbridge token`: prints the access token, creating it (mode 0600 in the data dir) on first
 * use. It needs nothing but the file, so its imports stop at `Security.ts`: no server, no store.
 */
export const token = (input: { readonly dataDir: string }) =>
  Effect.gen(function* () {
    const io = yield* Io
    io.out(`${loadOrCreateToken(resolve(input.dataDir))}\n`)
    return ExitCode.ok
  })
