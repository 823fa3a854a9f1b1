import * as Effect from "effect/Effect"
import { type CliExit, exitWith } from "./exitCodes.ts"

/**
 * Imports a command's module, then runs it; the number it ends with is the exit code. Every
 * handler in the command table goes through it, so that `planbridge token` or `--help` loads no
 * command's module (fastify, drizzle, the provider SDKs, …).
 */
export const lazily =
  <M, I>(load: () => Promise<M>, run: (module: M, input: I) => Effect.Effect<number>) =>
  (input: I): Effect.Effect<void, CliExit> =>
    Effect.promise(load).pipe(
      Effect.flatMap((module) => run(module, input)),
      Effect.flatMap(exitWith)
    )
