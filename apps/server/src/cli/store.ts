import { Cause, Effect, Layer, type Scope } from "effect"
import { resolve } from "node:path"
import { RuntimeIngestion } from "../orchestration/RuntimeIngestion.ts"
import { selectStore, storeOption } from "../persistence/StoreSelection.ts"
import type { StoreServices } from "../persistence/StoreServices.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"

/** Where a command's state is: `--store` (else PLANBRIDGE_STORE) when given, else the data directory's SQLite file. */
export interface StoreLocation {
  readonly dataDir: string
  readonly store: string | undefined
}

/** The store services and ingestion on the command's store. */
export const storeLayer = (location: StoreLocation) =>
  RuntimeIngestion.layer.pipe(
    Layer.provideMerge(selectStore({ store: storeOption(location.store), dataDir: resolve(location.dataDir) }))
  )

type Store = StoreServices | RuntimeIngestion

/** Runs a command's effect against the store; a failure (typed or not) becomes a message and exit code 1. */
export const withStore = (
  location: StoreLocation,
  effect: Effect.Effect<number, unknown, Store | Scope.Scope>
): Effect.Effect<number> =>
  Effect.scoped(Effect.provide(effect, storeLayer(location))).pipe(
    Effect.catchCause((cause) =>
      Effect.gen(function* () {
        const io = yield* Io
        io.err(`planbridge: ${describeCause(cause)}\n`)
        return ExitCode.failed
      })
    )
  )

const describeCause = (cause: Cause.Cause<unknown>): string => {
  const text = String(cause)
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text
}
