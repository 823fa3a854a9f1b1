import BetterSqlite3 from "better-sqlite3"
import { drizzle } from "drizzle-orm/better-sqlite3"
import { migrate } from "drizzle-orm/better-sqlite3/migrator"
import { Effect, Layer } from "effect"
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import {
  fingerprintOf,
  recallOutcome,
  rememberOutcome,
  type ClientRequest
} from "../../src/orchestration/ClientRequests.ts"
import { ClientRequestStore, clientRequestStore } from "../../src/persistence/ClientRequestStore.ts"
import { Database, MIGRATIONS_FOLDER } from "../../src/persistence/Database.ts"
import { sqliteStatementPort } from "../../src/persistence/SqliteStatementPort.ts"
import { tempDir } from "../support/ingestionRuntime.ts"
import { errorInfoOf } from "../../src/server/WireErrors.ts"

/**
 * The idempotency store for answer-like commands: what a `clientRequestId` was first used for
 * is stored (as a salted hash, never the answer), and rows written before that existed still
 * decode and still return their outcome to a retry.
 */
const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))
const newDir = () => {
  const t = tempDir("client-requests")
  cleanups.push(t.cleanup)
  return t.dir
}

/** The SQLite client request store on `filename`, and the raw connection to look at its rows. */
const withStore = <A>(
  filename: string,
  f: (store: ClientRequestStore["Service"], sqlite: Database["Service"]["sqlite"]) => Effect.Effect<A, unknown>
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* f(yield* ClientRequestStore, (yield* Database).sqlite)
    }).pipe(
      Effect.provide(
        clientRequestStore.pipe(Layer.provide(sqliteStatementPort), Layer.provideMerge(Database.layer({ filename })))
      )
    )
  )

/** A store failure is no outcome a test expects: it fails the test as a defect. */
const recall = (store: ClientRequestStore["Service"], request: ClientRequest) =>
  Effect.catchTag(recallOutcome(store, request), "StoreError", (e) => Effect.die(e))

const respond = (clientRequestId: string, target: string, payload: unknown): ClientRequest => ({
  clientRequestId,
  command: "userInput.respond",
  target,
  payload
})

describe("client request outcomes", () => {
  it("an identical retry gets the first outcome; another target, command or content is a conflict", async () => {
    const file = join(newDir(), "planbridge.db")
    await withStore(file, (store, sqlite) =>
      Effect.gen(function* () {
        const first = respond("id-1", "prompt-a", {
          answers: [{ questionId: "q", text: "s3cr3t-value", selectedOptionIds: undefined }]
        })
        expect(yield* recall(store, first)).toBeUndefined()
        yield* rememberOutcome(store, first, { promptId: "prompt-a", status: "resolved" })
        // Key order and undefined members do not make a retry a different command.
        const retry = respond("id-1", "prompt-a", { answers: [{ text: "s3cr3t-value", questionId: "q" }] })
        expect(yield* recall(store, retry)).toEqual({ promptId: "prompt-a", status: "resolved" })

        const conflicts = [
          respond("id-1", "prompt-b", retry.payload),
          { ...retry, command: "userInput.dismiss" as const, payload: { resolution: "empty" } },
          respond("id-1", "prompt-a", { answers: [{ questionId: "q", text: "another value" }] })
        ]
        const errors = []
        for (const request of conflicts) errors.push(yield* Effect.flip(recall(store, request)))
        // Each names the first use, so the client can tell which answer the id already carried.
        for (const e of errors) {
          expect(errorInfoOf(e).code).toBe("client_request_conflict")
          expect(e.message).toContain("'id-1' was already used for userInput.respond on 'prompt-a'")
        }
        expect(errors[2]!.message).toContain("with other content")

        // Stored: the command, its target and a hash; the answer itself nowhere.
        const row = sqlite.prepare("select * from client_requests").get() as Record<string, unknown>
        const fingerprint = fingerprintOf(first)
        expect(row).toMatchObject({ command: "userInput.respond", target: "prompt-a", fingerprint })
        expect(JSON.stringify(row)).not.toContain("s3cr3t")
        // Salted with the id: the same answer under another id hashes differently.
        expect(fingerprintOf({ ...first, clientRequestId: "id-2" })).not.toBe(fingerprintOf(first))
      })
    )
  })

  it("rows stored before the fingerprint columns still decode after the migration and keep their outcome", async () => {
    const dir = newDir()
    const file = join(dir, "planbridge.db")
    // The database as the first release left it: only migration 0000 applied, one stored outcome.
    const oldMigrations = join(dir, "migrations-0000")
    mkdirSync(join(oldMigrations, "meta"), { recursive: true })
    copyFileSync(join(MIGRATIONS_FOLDER, "0000_init.sql"), join(oldMigrations, "0000_init.sql"))
    const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8")) as {
      entries: Array<{ tag: string }>
    }
    const initOnly = { ...journal, entries: journal.entries.filter((e) => e.tag === "0000_init") }
    writeFileSync(join(oldMigrations, "meta", "_journal.json"), JSON.stringify(initOnly))
    const sqlite = new BetterSqlite3(file)
    migrate(drizzle({ client: sqlite }), { migrationsFolder: oldMigrations })
    sqlite
      .prepare("insert into client_requests (client_request_id, outcome, created_at) values (?, ?, ?)")
      .run("legacy-id", JSON.stringify({ promptId: "prompt-old", status: "resolved" }), "2026-11-01T00:00:00.000Z")
    sqlite.close()

    await withStore(file, (store, sqlite) =>
      Effect.gen(function* () {
        const row = sqlite.prepare("select * from client_requests").get() as Record<string, unknown>
        expect(row).toMatchObject({ client_request_id: "legacy-id", command: null, target: null, fingerprint: null })
        // Only the outcome's id is known: a retry on that prompt gets its outcome, another is refused.
        const retry = respond("legacy-id", "prompt-old", { answers: [] })
        expect(yield* recall(store, retry)).toEqual({ promptId: "prompt-old", status: "resolved" })
        const other = yield* Effect.flip(recall(store, respond("legacy-id", "prompt-new", { answers: [] })))
        expect(errorInfoOf(other)).toMatchObject({ code: "client_request_conflict" })
        expect(other.message).toContain("already used for an answer on 'prompt-old'")
      })
    )
  })
})
