import { Effect, Layer, type Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"

/** A fresh directory under the OS temp dir, removed by the returned cleanup. */
export const tempDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `planbridge-${label}-`))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Database (a real file) + ingestion, as the server wires them. */
export const ingestionLayer = (filename: string) => RuntimeIngestion.layer.pipe(Layer.provideMerge(Database.layer({ filename })))

/** Runs an effect against a real temp-file database; the database is closed afterwards. */
export const runWithIngestion = <A, E>(filename: string, effect: Effect.Effect<A, E, RuntimeIngestion | Database | Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, ingestionLayer(filename))))
