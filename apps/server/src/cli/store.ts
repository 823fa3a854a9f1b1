import { Cause, Effect, Layer, type Scope } from "effect"
import { resolve } from "node:path"
import { RuntimeIngestion } from "../orchestration/RuntimeIngestion.ts"
import { Database, databaseFileIn } from "../persistence/Database.ts"
import { OperatorQueries } from "../persistence/OperatorQueries.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"

/** Database, ingestion and operator queries over the database file in a data directory. */
export const storeLayer = (dataDir: string) => {
  const database = Database.layer({ filename: databaseFileIn(resolve(dataDir)) })
  return Layer.mergeAll(RuntimeIngestion.layer, OperatorQueries.layer).pipe(Layer.provideMerge(database))
}

type Store = Database | RuntimeIngestion | OperatorQueries

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
