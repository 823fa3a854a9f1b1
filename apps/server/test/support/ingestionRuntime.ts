import { Effect, Layer, type Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"
import { sqliteStoreServices } from "../../src/persistence/SqliteStore.ts"
import type { StoreServices } from "../../src/persistence/StoreServices.ts"

/** A fresh directory under the OS temp dir, removed by the returned cleanup. */
export const tempDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `planbridge-${label}-`))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Ingestion over the store services on a real SQLite file, as the server wires them; the
 * `Database` too, so that tests can look at the rows themselves.
 */
export const ingestionLayer = (filename: string) =>
  RuntimeIngestion.layer.pipe(Layer.provideMerge(sqliteStoreServices), Layer.provideMerge(Database.layer({ filename })))

type Provided = RuntimeIngestion | StoreServices | Database | Scope.Scope

/** Runs an effect against a real temp-file database; the database is closed afterwards. */
export const runWithIngestion = <A, E>(filename: string, effect: Effect.Effect<A, E, Provided>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, ingestionLayer(filename))))
