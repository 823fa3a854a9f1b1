import { Cause, Effect, Layer, type Scope } from "effect"
import { resolve } from "node:path"
import { RuntimeIngestion } from "../orchestration/RuntimeIngestion.ts"
import { databaseFileIn } from "../persistence/SqliteFiles.ts"
import { sqliteStore } from "../persistence/SqliteStore.ts"
import type { StoreServices } from "../persistence/StoreServices.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"

/** The store services and ingestion over the database file in a data directory. */
export const storeLayer = (dataDir: string) =>
  RuntimeIngestion.layer.pipe(Layer.provideMerge(sqliteStore({ filename: databaseFileIn(resolve(dataDir)) })))

type Store = StoreServices | RuntimeIngestion

/** Runs a command's effect against the store; a failure (typed or not) becomes a message and exit code 1. */
export const withStore = (
  dataDir: string,
  effect: Effect.Effect<number, unknown, Store | Scope.Scope>
): Effect.Effect<number> =>
  Effect.scoped(Effect.provide(effect, storeLayer(dataDir))).pipe(
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
