import { Effect, Layer, type Scope } from "effect"
import { resolve } from "node:path"
import { RuntimeIngestion } from "../orchestration/RuntimeIngestion.ts"
import { Database, databaseFileIn } from "../persistence/Database.ts"
import { OperatorQueries } from "../persistence/OperatorQueries.ts"

/** Database, ingestion and operator queries over the database file in a data directory. */
export const storeLayer = (dataDir: string) => {
  const database = Database.layer({ filename: databaseFileIn(resolve(dataDir)) })
  return Layer.mergeAll(RuntimeIngestion.layer, OperatorQueries.layer).pipe(Layer.provideMerge(database))
}

type Store = Database | RuntimeIngestion | OperatorQueries

/** Runs a CLI command's effect against the store; a typed failure becomes a message and exit code 1. */
export const runWithStore = async (dataDir: string, effect: Effect.Effect<number, unknown, Store | Scope.Scope>): Promise<number> => {
  const exit = await Effect.runPromiseExit(Effect.scoped(Effect.provide(effect, storeLayer(dataDir))))
  if (exit._tag === "Success") return exit.value
  process.stderr.write(`planbridge: ${describeCause(exit.cause)}\n`)
  return 1
}

const describeCause = (cause: unknown): string => {
  const text = String(cause)
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text
}
