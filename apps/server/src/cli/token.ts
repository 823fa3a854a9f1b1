import * as Effect from "effect/Effect"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { tokenOf } from "./storedToken.ts"

/** `planbridge token`: prints the access token stored in the data dir (mode 0600), created by `serve`. */
export const token = (input: { readonly dataDir: string }) =>
  Effect.gen(function* () {
    const io = yield* Io
    const found = tokenOf(input.dataDir)
    if ("refusal" in found) {
      io.err(`planbridge token: ${found.refusal}\n`)
      return ExitCode.failed
    }
    io.out(`${found.token}\n`)
    return ExitCode.ok
  })
